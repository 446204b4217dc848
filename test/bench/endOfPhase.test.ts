// The end of a collection split at the phases it announced, and the suite's closing summary: pure
// arithmetic and parsing over what a phase or `npm test` reported; no benchmark runs here.
import { describe, expect, it } from 'vitest';
import { endOfPhaseSplit, partAt } from '../../bench/endOfPhase.js';
import { suiteSummary } from '../../bench/suite.js';

describe('endOfPhaseSplit', () => {
  it('runs each part from its start to the next start, the last to the end', () => {
    const e = endOfPhaseSplit({
      firstRequestS: 0.4,
      lastAnswerS: 20,
      endPhasesS: { checkpoint: 21.5, alerts: 23, publishing: 23.25 },
      endS: 24.5,
    });
    expect(e).toEqual({ commitS: 1.5, checkpointS: 1.5, alertsS: 0.25, publishingS: 1.25 });
  });
  it('gives 0 to the parts a run skipped and carries the commits to the next part it went through', () => {
    // Alerts off: the checkpoint runs to publishing.
    expect(
      endOfPhaseSplit({
        firstRequestS: 0.4,
        lastAnswerS: 20,
        endPhasesS: { checkpoint: 21, publishing: 22 },
        endS: 23,
      }),
    ).toEqual({ commitS: 1, checkpointS: 1, alertsS: 0, publishingS: 1 });
    // Nothing loaded, nothing published: all of it is the last commits.
    expect(endOfPhaseSplit({ firstRequestS: 0.4, lastAnswerS: 20, endPhasesS: {}, endS: 20.5 })).toEqual({
      commitS: 0.5,
      checkpointS: 0,
      alertsS: 0,
      publishingS: 0,
    });
  });
  it('is unknown without a last answer', () => {
    expect(endOfPhaseSplit({ firstRequestS: null, lastAnswerS: null, endS: 3 })).toBeNull();
    expect(endOfPhaseSplit(undefined)).toBeNull();
  });
});

describe('partAt', () => {
  const t = { firstRequestS: 0.4, lastAnswerS: 20, endPhasesS: { checkpoint: 21.5, alerts: 23 }, endS: 24.5 };
  it('names the part of the collection a moment fell in', () => {
    expect([0.1, 0.4, 12, 20, 20.5, 21.5, 22, 23, 24.5].map((s) => partAt(t, s))).toEqual([
      'start-up',
      'requests',
      'requests',
      'requests',
      'last commits',
      'checkpoint',
      'checkpoint',
      'alerts',
      'alerts',
    ]);
  });
  it('knows nothing without a timing, and only start-up before any request', () => {
    expect(partAt(undefined, 3)).toBe('unknown');
    expect(partAt({ firstRequestS: null, lastAnswerS: null, endS: 3 }, 1)).toBe('start-up');
  });
});

describe('suiteSummary', () => {
  it("keeps vitest's Test Files, Tests and Duration lines without their colours", () => {
    const out = [
      ' \u001b[32m✓\u001b[39m test/a.test.ts (2 tests) 12ms',
      '',
      '\u001b[2m Test Files \u001b[22m \u001b[1m\u001b[32m100 passed\u001b[39m\u001b[22m\u001b[90m (100)\u001b[39m',
      '\u001b[2m      Tests \u001b[22m \u001b[1m\u001b[32m666 passed\u001b[39m\u001b[22m\u001b[90m (666)\u001b[39m',
      '\u001b[2m   Start at \u001b[22m 22:51:10',
      '\u001b[2m   Duration \u001b[22m 752.55s\u001b[2m (transform 15.20s, import 66.8s, tests 1316s)\u001b[22m',
    ].join('\n');
    expect(suiteSummary(out)).toEqual([
      'Test Files  100 passed (100)',
      'Tests  666 passed (666)',
      'Duration  752.55s (transform 15.20s, import 66.8s, tests 1316s)',
    ]);
  });
});

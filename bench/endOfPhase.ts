// The end of a collection, after its last answer, split at the phases the collector announces: the last
// commits (until the checkpoint starts), the checkpoint, the alerts and publishing the analyst copy.
import type { EndPhase, PhaseTiming } from './phase.js';

export interface EndOfPhase {
  commitS: number;
  checkpointS: number;
  alertsS: number;
  publishingS: number;
}

const ORDER: EndPhase[] = ['checkpoint', 'alerts', 'publishing'];

/**
 * Each part runs from its start to the next start the run announced (the last to the end); a part the
 * run skipped (no checkpoint when nothing was loaded, no alerts when they are off) is 0. Null without a
 * last answer.
 */
export function endOfPhaseSplit(t: PhaseTiming | undefined): EndOfPhase | null {
  if (!t || t.lastAnswerS == null) return null;
  const marks: (number | null)[] = [t.lastAnswerS, ...ORDER.map((p) => t.endPhasesS?.[p] ?? null), t.endS];
  const part = (i: number): number => {
    const from = marks[i];
    if (from == null) return 0;
    const to = marks.slice(i + 1).find((m) => m != null) ?? t.endS;
    return Math.max(0, to - from);
  };
  return { commitS: part(0), checkpointS: part(1), alertsS: part(2), publishingS: part(3) };
}

/** The part of a collection a moment (seconds since its process started) fell in: the peak RSS's, say. */
export function partAt(t: PhaseTiming | undefined, atS: number): string {
  if (!t) return 'unknown';
  if (t.firstRequestS == null || atS < t.firstRequestS) return 'start-up';
  if (t.lastAnswerS == null || atS <= t.lastAnswerS) return 'requests';
  const started = ORDER.filter((p) => (t.endPhasesS?.[p] ?? Infinity) <= atS);
  return started.at(-1) ?? 'last commits';
}

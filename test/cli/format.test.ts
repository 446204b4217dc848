// The status table's run column: run ids begin with their date and time, so it shows their random suffix.
import { describe, expect, it } from 'vitest';
import { shortRunId } from '../../src/cli/format.js';

describe('status runs table', () => {
  it('shows the distinguishing last 8 characters of a run id, not its date', () => {
    expect(shortRunId('20261123T021812Z-3f9a1c0b')).toBe('3f9a1c0b');
    expect(shortRunId('20261123T021812Z-77e0d2aa')).not.toBe(shortRunId('20261123T021812Z-3f9a1c0b'));
    expect(shortRunId('r1')).toBe('r1');
  });
});

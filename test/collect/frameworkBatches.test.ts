// Frameworks requests sized from the framework counts the inventory knows: never a last page exactly full.
import { describe, expect, it } from 'vitest';
import { nextBatchSize } from '../../src/collect/frameworkBatches.js';

/** Cuts counts into requests the way the collector does, programs arriving in pages of `arrive`. */
function cut(counts: number[], arrive: number, pageSize = 1000, maxIds = 100): number[][] {
  const waiting: number[] = [];
  const out: number[][] = [];
  for (let i = 0; i <= counts.length; i += arrive) {
    const final = i + arrive >= counts.length;
    waiting.push(...counts.slice(i, i + arrive));
    for (let n; (n = nextBatchSize(waiting, pageSize, maxIds, final)) > 0;) out.push(waiting.splice(0, n));
    if (final) break;
  }
  return out;
}
const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);

describe('frameworks requests', () => {
  it('cuts 100 programs of 10 frameworks one program short, and carries the rest into the next request', () => {
    const batches = cut(new Array(300).fill(10), 100);
    expect(batches.map((b) => b.length)).toEqual([99, 99, 99, 3]);
    for (const b of batches) expect(sum(b) % 1000).not.toBe(0);
    expect(sum(batches.map(sum))).toBe(3000);
  });

  it('takes a full 100 programs when their frameworks do not fill the last page exactly', () => {
    const counts = Array.from({ length: 250 }, (_, i) => 2 + (i % 9));
    const batches = cut(counts, 100);
    expect(batches.slice(0, -1).every((b) => b.length === 100)).toBe(true);
    expect(batches.flat()).toEqual(counts);
  });

  it('drops programs with no known frameworks from the end only while the page would still be exactly full', () => {
    const counts = [...new Array(99).fill(10), 10, 0, 0];
    // 100 programs hold exactly 1,000 here: the last one (10) goes to the next request with the two zeros.
    expect(nextBatchSize(counts.slice(0, 100), 1000, 100, false)).toBe(99);
    expect(nextBatchSize([500, 500, 0, 0], 1000, 100, true)).toBe(1);
  });

  it('waits for more programs until a request is full, unless the programs listing has ended', () => {
    expect(nextBatchSize([10, 10], 1000, 100, false)).toBe(0);
    expect(nextBatchSize([10, 10], 1000, 100, true)).toBe(2);
    expect(nextBatchSize([], 1000, 100, true)).toBe(0);
  });

  it('sends a lone program whose frameworks fill pages exactly: it cannot be split', () => {
    expect(nextBatchSize([2000], 1000, 100, true)).toBe(1);
  });
});

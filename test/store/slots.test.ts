import { describe, expect, it } from 'vitest';
import { Slots } from '../../src/store/slots.js';

/** A promise with its resolve, for holding a slot until the test says. */
function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

/** Lets every queued promise callback run. */
const settle = () => new Promise<void>((r) => setImmediate(r));

describe('Slots', () => {
  it('runs at most n at once, in the order asked', async () => {
    const slots = new Slots(2);
    const order: string[] = [];
    const holds = [deferred(), deferred(), deferred()];
    const runs = holds.map((h, i) =>
      slots.run(async () => {
        order.push(`start ${i}`);
        await h.promise;
        order.push(`end ${i}`);
      }),
    );
    await settle();
    expect(order).toEqual(['start 0', 'start 1']);
    holds[1]!.resolve();
    await settle();
    expect(order).toEqual(['start 0', 'start 1', 'end 1', 'start 2']);
    holds[0]!.resolve();
    holds[2]!.resolve();
    await Promise.all(runs);
  });

  it('runAlone waits for every holder, and no slot is taken until it ends', async () => {
    const slots = new Slots(2);
    const order: string[] = [];
    const first = deferred();
    const alone = deferred();
    const a = slots.run(async () => {
      order.push('a');
      await first.promise;
      order.push('a done');
    });
    const lone = slots.runAlone(async () => {
      order.push('alone');
      await alone.promise;
      order.push('alone done');
    });
    const b = slots.run(async () => {
      order.push('b');
    });
    await settle();
    // b took the free slot before runAlone could hold both; runAlone waits for a and b.
    expect(order).toEqual(['a', 'b']);
    first.resolve();
    await settle();
    expect(order).toEqual(['a', 'b', 'a done', 'alone']);
    const c = slots.run(async () => {
      order.push('c');
    });
    await settle();
    expect(order.at(-1)).toBe('alone');
    alone.resolve();
    await Promise.all([a, b, lone, c]);
    expect(order).toEqual(['a', 'b', 'a done', 'alone', 'alone done', 'c']);
  });

  it('two runAlone callers beside single holders end, one after the other, and a throw frees every slot', async () => {
    const slots = new Slots(3);
    const order: string[] = [];
    const singles = Array.from({ length: 6 }, (_, i) =>
      slots.run(async () => {
        await settle();
        order.push(`s${i}`);
      }),
    );
    const failing = slots.runAlone(async () => {
      order.push('x');
      throw new Error('refused');
    });
    const second = slots.runAlone(async () => {
      order.push('y');
    });
    await expect(failing).rejects.toThrow('refused');
    await second;
    await Promise.all(singles);
    expect(order.indexOf('x')).toBeLessThan(order.indexOf('y'));
    expect(order).toHaveLength(8);
    // Every slot is free again: three run at once.
    const holds = [deferred(), deferred(), deferred()];
    let running = 0;
    const again = holds.map((h) =>
      slots.run(async () => {
        running++;
        await h.promise;
      }),
    );
    await settle();
    expect(running).toBe(3);
    for (const h of holds) h.resolve();
    await Promise.all(again);
  });
});

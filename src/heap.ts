// A consumption page is a 16 MB string and tens of MB of parsed objects that are garbage as soon as it is
// staged, but V8 sizes its heap for throughput and lets several pages' garbage pile up (BENCHMARKS.md,
// "A full garbage collection after 48 MB of heap growth (2026-11-23)"). The collector asks for
// a full collection once the heap has grown by PAGE_GARBAGE_MB since the last one, which keeps the
// process's memory bounded whatever V8's own heuristics choose.
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

/** Growth of V8's heap and array buffers since the last collection that triggers the next one. */
export const PAGE_GARBAGE_MB = 48;

let gc: (() => void) | null | undefined;
let baseline = 0;

/** V8's gc(), exposed for this process on first use; null where the runtime refuses. */
function collector(): (() => void) | null {
  if (gc === undefined) {
    try {
      setFlagsFromString('--expose-gc');
      gc = runInNewContext('gc') as () => void;
    } catch {
      gc = null;
    }
  }
  return gc;
}

/** After a page: collects the garbage of the pages read since the last collection, once it is worth it. */
export function collectPageGarbage(): void {
  const { heapUsed, arrayBuffers } = process.memoryUsage();
  if (heapUsed + arrayBuffers - baseline < PAGE_GARBAGE_MB * 2 ** 20) return;
  const collect = collector();
  if (!collect) return;
  collect();
  const after = process.memoryUsage();
  baseline = after.heapUsed + after.arrayBuffers;
}

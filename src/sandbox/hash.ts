// Deterministic integer hashing and a seeded PRNG: every generated fact derives from the seed,
// so the same seed always gives the same world, the same values and the same fault sequence.

/** A 32-bit avalanche mix (a bijection on uint32, so distinct inputs never collide). */
export function mix32(x: number): number {
  x = Math.imul(x ^ (x >>> 16), 0x7feb352d);
  x = Math.imul(x ^ (x >>> 15), 0x846ca68b);
  return (x ^ (x >>> 16)) >>> 0;
}

/** Hash of a few integers (each folded into the running state), as uint32. */
export function hash(...parts: number[]): number {
  let h = 0x9e3779b9;
  for (const p of parts) h = mix32(h ^ mix32((p | 0) ^ Math.floor(p / 4294967296)));
  return h;
}

/** Hash of three integers without allocating (the hot path of the value generator). */
export function hash3(a: number, b: number, c: number): number {
  return mix32(mix32(mix32(a ^ 0x9e3779b9) ^ b) ^ c);
}

export function hashString(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193);
  return mix32(h >>> 0);
}

/** mulberry32: a small seeded PRNG with a uniform [0, 1) output. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export function hex8(x: number): string {
  return (x >>> 0).toString(16).padStart(8, '0');
}

// Exact decimal money: amounts are scaled bigints, rounded once, half-up (away from zero).
// Kept beside the SQL that does the same arithmetic (the spend macros of queries/schema/004_spend_in_database.sql) so both agree.

/** Micro-units per unit: rates are stored as integers at this scale (at most 6 decimals). */
export const RATE_SCALE = 6;

/** Parses a non-negative decimal string to an integer at `scale` decimals; undefined if malformed or too precise. */
export function parseDecimal(s: string, scale: number): bigint | undefined {
  const m = /^([0-9]+)(?:\.([0-9]+))?$/.exec(s.trim());
  if (!m) return undefined;
  const frac = m[2] ?? '';
  if (frac.length > scale) return undefined;
  return BigInt(m[1]! + frac.padEnd(scale, '0'));
}

/** Formats an integer at `scale` decimals as a decimal string ("-0.05", "12.30"). */
export function formatScaled(v: bigint, scale: number): string {
  const neg = v < 0n;
  const a = (neg ? -v : v).toString().padStart(scale + 1, '0');
  const s = scale === 0 ? a : `${a.slice(0, a.length - scale)}.${a.slice(a.length - scale)}`;
  return neg ? `-${s}` : s;
}

/** num / den rounded half away from zero (den > 0). */
export function divHalfUp(num: bigint, den: bigint): bigint {
  const q = (2n * (num < 0n ? -num : num) + den) / (2n * den);
  return num < 0n ? -q : q;
}

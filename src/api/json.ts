// Lossless JSON: the API's counters are int64 and can exceed 2^53, where JSON.parse silently rounds.
// Most answers hold no such number, so the one lossless test (page/needsLossless.ts) decides whether
// the (much faster) JSON.parse is safe; only texts that need it go through lossless-json. Either way the
// bytes are checked first (contract/jsonText.ts): UTF-8 only, a key at most once per object, as for
// consumption pages.
import { isInteger, parse as losslessParse } from 'lossless-json';
import { checkJsonText } from '../contract/jsonText.js';
import { needsLossless } from '../page/needsLossless.js';

/** Integers outside the safe range as bigint; every other number exactly as JSON.parse reads it. */
function parseNumber(literal: string): number | bigint {
  if (isInteger(literal)) {
    const n = Number(literal);
    return Number.isSafeInteger(n) ? n : BigInt(literal);
  }
  return Number(literal);
}

/**
 * Parses JSON text (an answer's bytes, or text already decoded). Integers beyond Number.MAX_SAFE_INTEGER
 * come back as bigint; everything else is as JSON.parse gives it. Throws SyntaxError, naming the path,
 * on anything that is not JSON in UTF-8 or holds a key twice in one object.
 */
export function parseJson(body: Uint8Array | string): unknown {
  const bytes = typeof body === 'string' ? Buffer.from(body, 'utf8') : body;
  const offence = checkJsonText(bytes);
  if (offence !== null) throw new SyntaxError(`${offence.path}: ${offence.problem}`);
  const text =
    typeof body === 'string' ? body : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length).toString('utf8');
  if (!needsLossless(text)) return JSON.parse(text);
  return losslessParse(text, null, { parseNumber });
}

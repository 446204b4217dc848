// The one test of whether JSON.parse may read a text, shared by the page reader (readPage.ts) and the
// client's parser of every other answer (api/json.ts). The API's counters are int64, and JSON.parse
// rounds beyond 2^53; lossless-json keeps every literal, but is several times slower, so a text goes to
// it only when it has to.

/**
 * A number literal that starts a value (at the start of the text, or after ':', '[' or ',', whitespace
 * aside) and that JSON.parse could not keep exactly or could not tell apart: 16 digits or more (every
 * integer of 15 is safe; 2^53 has 16), a fraction or an exponent (1.0 and 1e3 would read as the integers
 * 1 and 1000), a minus sign (-0 would read as 0). A ':' or ',' inside a string may send a text down the
 * exact path needlessly: the same values, read more slowly. A digit anywhere else is inside a string.
 */
const INEXACT_NUMBER = /(?:^|[:,[])[ \t\n\r]*(?:-|\d{16}|\d+[.eE])/;

/** Whether `text` holds a number literal JSON.parse could not keep exactly (see INEXACT_NUMBER), so lossless-json must read it. */
export function needsLossless(text: string): boolean {
  return INEXACT_NUMBER.test(text);
}

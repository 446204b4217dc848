import { describe, expect, it } from 'vitest';
import { parseJson } from '../../src/api/json.js';
import { needsLossless } from '../../src/page/needsLossless.js';

describe('parseJson', () => {
  it('keeps int64 values beyond 2^53 exact, as bigint', () => {
    const v = parseJson(
      '{"a": 9007199254740993, "b": 9223372036854775807, "c": -9223372036854775808, "d": [9007199254740992, 42]}',
    ) as Record<string, unknown>;
    expect(v.a).toBe(9007199254740993n);
    expect(v.b).toBe(9223372036854775807n);
    expect(v.c).toBe(-9223372036854775808n);
    // 2^53 itself is not a safe integer (2^53 + 1 rounds to it), so it is a bigint too; small ones stay numbers.
    expect(v.d).toEqual([9007199254740992n, 42]);
  });

  it('gives numbers for safe integers even when the text has a long digit run', () => {
    const v = parseJson('{"max": 9007199254740991, "id": "1234567890123456789", "n": 7}') as Record<string, unknown>;
    expect(v.max).toBe(Number.MAX_SAFE_INTEGER);
    expect(v.id).toBe('1234567890123456789');
    expect(v.n).toBe(7);
  });

  it('reads everything else exactly as JSON.parse does, on both paths', () => {
    const samples = [
      '{"f": 1.5, "e": 1e21, "neg": -0.25, "s": "x\\u00e9\\n", "t": true, "z": null, "arr": [], "o": {}}',
      '{"long_float": 0.12345678901234567890, "big_float": 12345678901234567890.5, "exp": 1234567890123456e3}',
      '[1, 2, 3, "a", {"b": [false]}]',
      '"just a string"',
      '0',
    ];
    for (const text of samples) {
      expect(parseJson(text)).toEqual(JSON.parse(text));
    }
    // Both paths are taken: lossless-json for the fractions and long numbers, JSON.parse for the rest.
    expect(samples.map(needsLossless)).toEqual([true, true, false, false, false]);
  });

  it('refuses a key given twice in one object on both paths, naming its path, equal values or not', () => {
    expect(() => parseJson('{"k": 1, "k": 2, "big": 99999999999999999}')).toThrow(/^\$\.k: the key "k" is given twice/);
    expect(() => parseJson('{"a": [{"k": 1, "k": 1}]}')).toThrow(/^\$\.a\[0\]\.k: the key "k" is given twice/);
    // The same key spelt with an escape is the same key.
    expect(() => parseJson('{"k": 1, "\\u006b": 1}')).toThrow(SyntaxError);
    expect(parseJson('{"k": 1, "o": {"k": 2}}')).toEqual({ k: 1, o: { k: 2 } });
  });

  it('refuses bytes that are not UTF-8 on both paths, where JSON.parse would read U+FFFD', () => {
    const bad = (long: boolean) =>
      Buffer.concat([
        Buffer.from(`{"n": ${long ? '12345678901234567' : '1'}, "s": "a`),
        Buffer.from([0xc3, 0x28]),
        Buffer.from('"}'),
      ]);
    for (const long of [false, true]) expect(() => parseJson(bad(long))).toThrow(/^\$\.s: not valid UTF-8 at byte/);
    expect(parseJson(Buffer.from('{"s": "\u00e9t\u00e9 \u{1F600}"}'))).toEqual({ s: '\u00e9t\u00e9 \u{1F600}' });
  });

  it('throws SyntaxError on invalid JSON on both paths', () => {
    expect(() => parseJson('<html>oops</html>')).toThrow(SyntaxError);
    expect(() => parseJson('{"a": 12345678901234567890')).toThrow(SyntaxError);
    expect(() => parseJson('')).toThrow(SyntaxError);
  });

  it('parses a realistic consumption page with large counters exactly', () => {
    const big = 2n ** 62n + 12345n;
    const text = JSON.stringify({
      programs: [
        {
          program_id: 'p-1',
          periods: [
            {
              period_id: 'x',
              consumption: [{ timeframe_start: '2025-01-01T00:00:00Z', metrics: [{ metric_name: 'm', value: 'BIG' }] }],
            },
          ],
        },
      ],
    }).replace('"BIG"', big.toString());
    const v = parseJson(text) as {
      programs: Array<{ periods: Array<{ consumption: Array<{ metrics: Array<{ value: unknown }> }> }> }>;
    };
    expect(v.programs[0]?.periods[0]?.consumption[0]?.metrics[0]?.value).toBe(big);
  });
});

// The one test of whether JSON.parse may read a text (page/needsLossless.ts), which both the page reader
// and the client's parseJson take: every number literal JSON.parse could round or could not tell apart
// goes to lossless-json, wherever a value can start; a number-like run inside a string does not.
import { describe, expect, it } from 'vitest';
import { needsLossless } from '../../src/page/needsLossless.js';

describe('needsLossless', () => {
  it('sends a page to the exact parser for a 16-digit, fractional, exponent or negative member value, whitespace or not', () => {
    for (const text of [
      '{"v":9007199254740993}',
      '{"v": \n 1234567890123456}',
      '{"v":1.0}',
      '{"v":\t2e3}',
      '{"v":7E1}',
      '{"v":-0}',
      '{"a":1,"v":-5}',
    ]) {
      expect(needsLossless(text), text).toBe(true);
    }
  });

  it('lets JSON.parse read pages whose numbers are all integers of at most 15 digits', () => {
    for (const text of [
      '{"v":123456789012345,"w":0}',
      '{"t":"2026-11-01T12:30:00Z","v": 42}',
      '{"id":"a-1.5e3","v":[1,2]}',
      '{}',
      '{"v":7',
    ]) {
      expect(needsLossless(text), text).toBe(false);
    }
  });

  it('looks at array elements and a text that is one number, not only at member values', () => {
    for (const text of [
      '[9007199254740993]',
      '{"d": [42, 9007199254740992]}',
      '[1,\n -2]',
      '[[0.5]]',
      '12345678901234567',
      ' -1',
      '1e3',
    ]) {
      expect(needsLossless(text), text).toBe(true);
    }
    for (const text of ['[1, 2, 3, "a", {"b": [false]}]', '[123456789012345]', '0', '"just a string"']) {
      expect(needsLossless(text), text).toBe(false);
    }
  });

  it('counts a digit run only where a number starts: 16 digits inside a string, or 15, never', () => {
    for (const text of [
      '{"a":"id-1234567890123456"}',
      '{"id":"1234567890123456789"}',
      '{"a":123456789012345,"b":123456789012345}',
      '{"s":"x 1.5 -2"}',
    ]) {
      expect(needsLossless(text), text).toBe(false);
    }
    expect(needsLossless('{"a":-1234567890123456}')).toBe(true);
  });
});

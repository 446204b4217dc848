import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { schemaReference } from '../../src/store/schemaDoc.js';

describe('docs/SCHEMA.md', () => {
  it('is the reference generated from the migrations (run `npm run build && npm run docs:schema` after a schema change)', async () => {
    const generated = await schemaReference();
    expect(generated).toMatch(/## usage_program \(view\)/);
    expect(generated).toMatch(/\| value \| BIGINT \| yes \| exact int64/);
    expect(readFileSync('docs/SCHEMA.md', 'utf8')).toBe(generated);
  });
});

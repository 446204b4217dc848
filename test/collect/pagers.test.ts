import { describe, expect, it } from 'vitest';
import { ResponseFormatError } from '../../src/api/errors.js';
import { cursorPages, jsonPage } from '../../src/collect/pagers.js';

type Item = { id: string };
const items = (from: number, n: number): Item[] => Array.from({ length: n }, (_, i) => ({ id: `p${from + i}` }));

async function collectAll(pages: unknown[], limit: number) {
  const seen: (string | undefined)[] = [];
  const out: string[] = [];
  for await (const page of cursorPages(
    async (cursor) => {
      seen.push(cursor);
      const body = pages[seen.length - 1];
      if (body === undefined) throw new Error('asked for a page past the end');
      return jsonPage<Item>(body, 'programs', `r${seen.length}`);
    },
    { itemsKey: 'programs', limit, describe: 'GET /test' },
  )) {
    out.push(...page.list.map((i) => i.id));
  }
  return { out, seen };
}

describe('cursorPages', () => {
  it('follows cursors and stops at a page without a pagination key', async () => {
    const { out, seen } = await collectAll([{ programs: items(0, 2), pagination: { cursor: 'p1' } }, { programs: items(2, 2) }], 2);
    expect(out).toEqual(['p0', 'p1', 'p2', 'p3']);
    expect(seen).toEqual([undefined, 'p1']);
  });

  it('stops at an empty page that still carries a cursor', async () => {
    const { out, seen } = await collectAll(
      [{ programs: items(0, 2), pagination: { cursor: 'p1' } }, { programs: [], pagination: { cursor: 'p1x' } }],
      2,
    );
    expect(out).toEqual(['p0', 'p1']);
    expect(seen.length).toBe(2);
  });

  it('spends no request on an empty page after a short one', async () => {
    const { seen } = await collectAll([{ programs: items(0, 1), pagination: { cursor: 'p0' } }], 2);
    expect(seen.length).toBe(1);
  });

  it('refuses a repeated cursor instead of looping', async () => {
    const page = { programs: items(0, 2), pagination: { cursor: 'p1' } };
    await expect(collectAll([page, page, page], 2)).rejects.toThrow(/second time/);
  });

  it('refuses a body without the items array, naming the request', async () => {
    await expect(collectAll([{ nope: 1 }], 2)).rejects.toBeInstanceOf(ResponseFormatError);
    await expect(collectAll([{ nope: 1 }], 2)).rejects.toThrow(/GET \/test.*"programs" array/);
  });
});

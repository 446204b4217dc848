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
    const { out, seen } = await collectAll(
      [{ programs: items(0, 2), pagination: { cursor: 'p1' } }, { programs: items(2, 2) }],
      2,
    );
    expect(out).toEqual(['p0', 'p1', 'p2', 'p3']);
    expect(seen).toEqual([undefined, 'p1']);
  });

  it('stops at an empty page that still carries a cursor', async () => {
    const { out, seen } = await collectAll(
      [
        { programs: items(0, 2), pagination: { cursor: 'p1' } },
        { programs: [], pagination: { cursor: 'p1x' } },
      ],
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

  it('asks for the next page while the caller handles one; its failure reaches the caller, never as an unhandled rejection', async () => {
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => unhandled.push(reason);
    process.on('unhandledRejection', onUnhandled);
    try {
      const asked: (string | undefined)[] = [];
      const pages = cursorPages(
        async (cursor) => {
          asked.push(cursor);
          if (cursor === 'p1') throw new Error('stopped');
          return jsonPage<Item>({ programs: items(0, 2), pagination: { cursor: 'p1' } }, 'programs', 'r1');
        },
        { itemsKey: 'programs', limit: 2, describe: 'GET /test' },
      );
      const first = await pages.next();
      expect(first.done).toBe(false);
      // The second page was asked for before the caller asked for it, and has failed meanwhile.
      expect(asked).toEqual([undefined, 'p1']);
      await new Promise((resolve) => setTimeout(resolve, 20));
      await expect(pages.next()).rejects.toThrow('stopped');
      expect(unhandled).toEqual([]);
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
  });

  describe("an id that comes again in one query's pages (a runaway cursor)", () => {
    /** Pages whose ids are `pages[k]`, each full, each with a new cursor; returns what was asked for and handed out. */
    async function run(pages: string[][], itemsKey: string, maxPages?: number) {
      const asked: (string | undefined)[] = [];
      const out: string[] = [];
      const iterate = async () => {
        for await (const page of cursorPages(
          async (cursor) => {
            asked.push(cursor);
            const ids = pages[Math.min(asked.length - 1, pages.length - 1)]!;
            return { items: ids.length, cursor: `c${asked.length}`, requestId: `r${asked.length}`, ids };
          },
          {
            itemsKey,
            limit: 2,
            describe: 'GET /test',
            ...(maxPages ? { maxPages: { pages: maxPages, why: 'the test' } } : {}),
          },
        ))
          out.push(...page.ids);
      };
      return { asked, out, done: iterate() };
    }

    it('stops at the second page when it hands back the first under a new cursor, whatever the bound, asking for no third', async () => {
      for (const maxPages of [undefined, 1000]) {
        const r = await run([['p0', 'p1']], 'programs', maxPages);
        await expect(r.done).rejects.toThrow(
          /page 2 of this query \(request id r2\) holds program p0, already on page 1: a cursor that runs away/,
        );
        expect(r.asked).toEqual([undefined, 'c1']);
        expect(r.out).toEqual(['p0', 'p1']);
      }
    });

    it('stops at a frameworks page that repeats a framework of an earlier one, or lists one twice', async () => {
      const later = await run(
        [
          ['f0', 'f1'],
          ['f2', 'f3'],
          ['f4', 'f1'],
        ],
        'frameworks',
      );
      await expect(later.done).rejects.toThrow(
        /page 3 of this query \(request id r3\) holds framework f1, already on page 1/,
      );
      expect(later.asked.length).toBe(3);
      const twice = await run([['f0', 'f0']], 'frameworks');
      await expect(twice.done).rejects.toThrow(/page 1 .* holds framework f0, twice on that page/);
      expect(twice.asked.length).toBe(1);
    });

    it('follows pages whose ids are all new', async () => {
      const r = await run([['a', 'b'], ['c', 'd'], ['e']], 'programs');
      await r.done;
      expect(r.out).toEqual(['a', 'b', 'c', 'd', 'e']);
    });
  });
});

// Paging over real HTTP: every item exactly once, in the documented order, with both shapes of
// last page; listing endpoints and keys of each type.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  CONSUMPTION_PATHS,
  V1_DEFAULT_METRICS,
  V2_FRAMEWORK_METRICS,
  V2_PROGRAM_METRICS,
} from '../../src/contract/api.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/server.js';
import { allPages, call, DAY, iso } from '../support/sandboxClient.js';

const NOW = Date.UTC(2025, 8, 20, 10, 37);
let sb: Sandbox;
let currentOrg: string;
let legacyOrg: string;
const FROM = NOW - 50 * DAY;
const window = { granularity: 'daily', from: iso(FROM), to: iso(NOW + DAY) };

beforeAll(async () => {
  // Limits raised: these tests page quickly; limits.test.ts and errors.int.test.ts cover the limits.
  sb = await startSandbox({ seed: 3, now: NOW, advance: false, limits: { perMinute: 1e6, perSecondPerRoute: 1e6 } });
  currentOrg = sb.world.orgs.find((o) => o.billing === 'current' && sb.world.personal_org_ids.includes(o.id))!.id;
  legacyOrg = sb.world.orgs.find((o) => o.billing === 'legacy')!.id;
});
afterAll(() => sb.close());

const ids = (items: { id?: string; program_id?: string; framework_id?: string }[]): string[] =>
  items.map((x) => x.framework_id ?? x.id ?? x.program_id!);
const expectUnique = (list: string[]): void => expect(new Set(list).size).toBe(list.length);

describe('paging returns every item exactly once', () => {
  it('GET /programs: the live programs of every reachable organisation, by id', async () => {
    const { items, pages } = await allPages(sb, '/programs', 'programs', { limit: 3 });
    const expected = sb.world.programs
      .filter((p) => sb.world.personal_org_ids.includes(p.org_id) && p.deleted_at === undefined)
      .map((p) => p.id)
      .sort();
    expect(ids(items)).toEqual(expected);
    expect(pages.length).toBeGreaterThan(5);
    expect(Object.keys(items[0]!).sort()).toEqual(['created_at', 'id', 'name', 'org_id', 'region_id', 'updated_at']);
  });

  it('v2 programs: newest created first, deleted programs included', async () => {
    const { items } = await allPages(sb, CONSUMPTION_PATHS.v2_programs, 'programs', {
      ...window,
      org_id: currentOrg,
      metrics: V2_PROGRAM_METRICS.join(','),
      limit: 3,
    });
    const expected = sb.world.programs
      .filter((p) => p.org_id === currentOrg)
      .sort((a, b) => b.created_at - a.created_at || (a.id < b.id ? -1 : 1))
      .map((p) => p.id);
    expect(ids(items)).toEqual(expected);
    const deleted = sb.world.programs.find((p) => p.org_id === currentOrg && p.deleted_at !== undefined)!;
    expect(ids(items)).toContain(deleted.id);
    const live = await call(sb, `/programs/${deleted.id}`);
    expect(live.status).toBe(404);
  });

  it('v1 programs: the legacy organisations, by id', async () => {
    const { items } = await allPages(sb, CONSUMPTION_PATHS.v1_programs, 'programs', { ...window, limit: 2 });
    const expected = sb.world.programs
      .filter((p) => p.org_id === legacyOrg)
      .map((p) => p.id)
      .sort();
    expect(ids(items)).toEqual(expected);
    for (const item of items)
      for (const p of item.periods)
        for (const c of p.consumption)
          expect(Object.keys(c).sort()).toEqual(['timeframe_end', 'timeframe_start', ...V1_DEFAULT_METRICS].sort());
  });

  it('v2 frameworks: by program id then framework id, with page boundaries inside a program', async () => {
    const programIds = sb.world.programs.filter((p) => p.org_id === currentOrg).map((p) => p.id);
    const { items, pages } = await allPages(sb, CONSUMPTION_PATHS.v2_frameworks, 'frameworks', {
      ...window,
      program_ids: programIds,
      metrics: V2_FRAMEWORK_METRICS,
      limit: 4,
    });
    const keys = items.map((x) => `${x.program_id}/${x.framework_id}`);
    expectUnique(keys);
    expect(keys).toEqual([...keys].sort());
    const expected = sb.world.frameworks
      .filter(
        (f) =>
          programIds.includes(f.program_id) &&
          (f.deleted_at === undefined || f.deleted_at > Math.max(FROM - (FROM % DAY), sb.world.framework_data_start)),
      )
      .map((f) => `${f.program_id}/${f.id}`)
      .sort();
    expect(keys).toEqual(expected);
    // Some deleted frameworks are listed (they had usage in the window), and some page splits a program.
    expect(items.some((x) => sb.world.frameworks.find((f) => f.id === x.framework_id)?.deleted_at !== undefined)).toBe(
      true,
    );
    const split = pages.some((page, i) => {
      const next = pages[i + 1] as { program_id: string }[] | undefined;
      const last = page[page.length - 1] as { program_id: string } | undefined;
      return next?.[0] !== undefined && last !== undefined && next[0].program_id === last.program_id;
    });
    expect(split).toBe(true);
  });

  it('the last page either has no pagination or a cursor to an empty page, depending on the query', async () => {
    const endings = new Set<boolean>();
    for (let limit = 2; limit <= 9; limit++) {
      const { items, trailingEmpty } = await allPages(sb, '/programs', 'programs', { limit });
      expectUnique(ids(items));
      endings.add(trailingEmpty);
    }
    expect([...endings].sort()).toEqual([false, true]);
  });

  it('concurrent pages do not share a buffer: each answer is the one asked for', async () => {
    const programIds = sb.world.programs.filter((p) => p.org_id === currentOrg).map((p) => p.id);
    const queries = programIds
      .slice(0, 6)
      .map((id) => ({ ...window, program_ids: id, metrics: V2_FRAMEWORK_METRICS.join(',') }));
    const sequential: string[] = [];
    for (const q of queries) sequential.push((await call(sb, CONSUMPTION_PATHS.v2_frameworks, q)).text);
    for (let round = 0; round < 3; round++) {
      const concurrent = await Promise.all(queries.map((q) => call(sb, CONSUMPTION_PATHS.v2_frameworks, q)));
      expect(concurrent.map((r) => r.text)).toEqual(sequential);
    }
  });

  it('an unknown cursor is refused with 400', async () => {
    const r = await call(sb, '/programs', { cursor: 'no-such-program' });
    expect(r.status).toBe(400);
  });
});

describe('listing endpoints and key reach', () => {
  it('frameworks and snapshots of a program; organisations of the user', async () => {
    const p = sb.world.programs.find(
      (x) =>
        x.org_id === currentOrg &&
        x.deleted_at === undefined &&
        (sb.world.frameworksByProgram.get(x.id) ?? []).some((f) => f.deleted_at !== undefined && f.deleted_at < NOW),
    )!;
    const fw = await call(sb, `/programs/${p.id}/frameworks`);
    expect(fw.status).toBe(200);
    const liveIds = sb.world.frameworksByProgram
      .get(p.id)!
      .filter((f) => f.deleted_at === undefined || f.deleted_at > NOW)
      .map((f) => f.id);
    expect(fw.body.frameworks.map((f: { id: string }) => f.id)).toEqual(liveIds);
    expect(fw.body.frameworks[0]).toMatchObject({ program_id: p.id, current_state: 'ready' });
    expect(typeof fw.body.frameworks[0].display_name).toBe('string');
    const snaps = await call(sb, `/programs/${p.id}/snapshots`);
    expect(snaps.status).toBe(200);
    expect(snaps.body.snapshots.length).toBeGreaterThan(0);
    for (const s of snaps.body.snapshots) {
      expect(Object.keys(s)).toEqual(
        expect.arrayContaining(['id', 'name', 'source_branch_id', 'created_at', 'manual']),
      );
      if (s.expires_at !== undefined) expect(Date.parse(s.expires_at)).toBeGreaterThan(NOW);
    }
    const one = await call(sb, `/programs/${p.id}`);
    expect(one.body.program.id).toBe(p.id);
    const orgs = await call(sb, '/users/me/organizations');
    expect(orgs.body.organizations.map((o: { id: string }) => o.id).sort()).toEqual(
      [...sb.world.personal_org_ids].sort(),
    );
    const auth = await call(sb, '/auth');
    expect(auth.body.key_type).toBe('personal');
  });

  it('an organisation key reaches one organisation, a program key one program', async () => {
    const orgKey = sb.keys.org[legacyOrg]!;
    const { items } = await allPages(sb, '/programs', 'programs', { limit: 50 }, { key: orgKey });
    expect(new Set(items.map((p) => p.org_id))).toEqual(new Set([legacyOrg]));
    const prog = await allPages(sb, '/programs', 'programs', {}, { key: sb.keys.program.key });
    expect(ids(prog.items)).toEqual([sb.keys.program.programId]);
    const other = sb.world.programs.find(
      (p) => p.org_id === currentOrg && p.id !== sb.keys.program.programId && p.deleted_at === undefined,
    )!;
    expect((await call(sb, `/programs/${other.id}`, {}, { key: sb.keys.program.key })).status).toBe(404);
    const v2 = await allPages(
      sb,
      CONSUMPTION_PATHS.v2_programs,
      'programs',
      { ...window, org_id: currentOrg, metrics: 'compute_unit_seconds' },
      { key: sb.keys.program.key },
    );
    expect(ids(v2.items)).toEqual([sb.keys.program.programId]);
  });
});

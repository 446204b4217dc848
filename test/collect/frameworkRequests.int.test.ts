// Frameworks requests over HTTP against the sandbox: once the store knows how many frameworks each
// program has (from the inventory, or from the usage of an earlier collection), no request's last page is
// exactly full, so a collection sends the fewest requests paging allows (one page per 1,000 frameworks of
// each 100 programs in the API's order), none of them for an empty page the API's trailing cursor would
// otherwise cost.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { collectCommand } from '../../src/cli/collect.js';
import { CONSUMPTION_PATHS, MAX_PROGRAM_IDS, PAGE_SIZE } from '../../src/contract/api.js';
import { silentLogger } from '../../src/log.js';
import { listFrameworks, listPrograms } from '../../src/sandbox/consumption.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/server.js';
import type { Framework } from '../../src/sandbox/model.js';
import { openStore } from '../../src/store/store.js';
import { rawSql } from '../../src/store/rawSql.js';
import { useTeardown } from '../support/fixture.js';

const NOW = Date.parse('2026-11-21T10:37:00Z');
const DAY = 86_400_000;
const FRAMEWORKS = CONSUMPTION_PATHS.v2_frameworks;

/** Every program of the current-billing organizations gets exactly ten live frameworks: 100 programs fill a page. */
function tenFrameworksEach(sb: Sandbox): void {
  const w = sb.world;
  for (const program of w.programs) {
    if (w.orgById.get(program.org_id)?.billing !== 'current') continue;
    delete program.deleted_at; // a deleted program's frameworks would not all be known live
    const own = (w.frameworksByProgram.get(program.id) ?? []).slice(0, 10);
    for (const f of own) delete f.deleted_at;
    for (let i = own.length; i < 10; i++) {
      const f: Framework = {
        ...own[0]!,
        id: `${own[0]!.id}-x${i}`,
        name: `extra-${i}`,
        display_name: `Extra ${i}`,
        default: false,
        key: own[0]!.key + i * 7919,
      };
      own.push(f);
      w.frameworks.push(f);
    }
    w.frameworksByProgram.set(program.id, own);
  }
}

/** The fewest frameworks requests for a window: per 100 programs in the API's order, a page per 1,000 frameworks. */
function fewest(sb: Sandbox, from: number, to: number): { requests: number; fullBatches: number } {
  let requests = 0;
  let fullBatches = 0;
  for (const org of sb.world.orgs) {
    if (org.billing !== 'current' || !sb.world.personal_org_ids.includes(org.id)) continue;
    const programs = listPrograms(sb.world, 'v2_programs', new Set([org.id]), {
      granularity: 'daily',
      from,
      to,
      now: NOW,
    });
    for (let i = 0; i < programs.length; i += MAX_PROGRAM_IDS) {
      const n = listFrameworks(
        sb.world,
        programs.slice(i, i + MAX_PROGRAM_IDS).map((p) => p.id),
        { granularity: 'daily', from, to, now: NOW },
      ).length;
      requests += Math.max(1, Math.ceil(n / PAGE_SIZE.v2_frameworks.max));
      if (n > 0 && n % PAGE_SIZE.v2_frameworks.max === 0) fullBatches++;
    }
  }
  return { requests, fullBatches };
}

describe('frameworks requests sized from the inventory', () => {
  let sb: Sandbox;
  const dir = mkdtempSync(join(tmpdir(), 'usage-fwreq-'));
  const db = join(dir, 'usage.duckdb');
  const config = join(dir, 'usage.toml');
  // Both sides allow far more than the API's 700 requests a minute: the first run's inventory is not paced.
  writeFileSync(config, '[api.rate_limit]\nper_minute = 100000\nper_second_per_route = 1000\n');
  const run = (from: string, to: string) =>
    collectCommand({
      config,
      db,
      env: { USAGE_API_KEY: sb.apiKey },
      baseUrl: sb.baseUrl,
      now: () => sb.now(),
      log: silentLogger,
      granularity: 'daily',
      from,
      to,
    });

  beforeAll(async () => {
    sb = await startSandbox({
      scenario: 'medium',
      now: NOW,
      advance: false,
      limits: { perMinute: 100_000, perSecondPerRoute: 1_000 },
    });
    tenFrameworksEach(sb);
    // The first run learns the inventory (every program's frameworks).
    await run('2026-11-18', '2026-11-19');
  }, 120_000);
  afterAll(async () => sb?.close());

  it('sends no request whose last page is exactly full, and so the fewest requests', async () => {
    const store = await openStore({ path: db, readOnly: true });
    const known = await store.inventory.counts();
    await store.close();
    expect(known.frameworks).toBeGreaterThan(0);

    const from = Date.parse('2026-11-19T00:00:00Z');
    const to = from + 2 * DAY;
    const min = fewest(sb, from, to);
    // The world is made so that batches of 100 programs fill their page exactly: the case to avoid.
    expect(min.fullBatches).toBeGreaterThan(0);
    sb.resetStats();
    const result = await run('2026-11-19', '2026-11-21');
    expect(result.exitCode).toBe(0);
    expect(sb.stats().byRoute[FRAMEWORKS]).toBe(min.requests);
  }, 120_000);
});

describe('frameworks requests sized from the usage the store holds', () => {
  // Both collections overlap on 2026-11-19, as a daily run re-collects its settle window.
  const FIRST = ['2026-11-18', '2026-11-20'] as const;
  const SECOND = ['2026-11-19', '2026-11-21'] as const;
  const secondFrom = Date.parse('2026-11-19T00:00:00Z');
  const secondTo = secondFrom + 2 * DAY;

  const own = useTeardown();

  async function setUp(prefix: string, changeWorld: (sb: Sandbox) => void) {
    const dir = mkdtempSync(join(tmpdir(), prefix));
    const config = join(dir, 'usage.toml');
    writeFileSync(config, '[api.rate_limit]\nper_minute = 100000\nper_second_per_route = 1000\n');
    const sb = await startSandbox({
      scenario: 'medium',
      now: NOW,
      advance: false,
      limits: { perMinute: 100_000, perSecondPerRoute: 1_000 },
    });
    own({
      cleanup: async () => {
        await sb.close();
        rmSync(dir, { recursive: true, force: true });
      },
    });
    changeWorld(sb);
    const run = (window: readonly [string, string], inventory: 'auto' | 'never') =>
      collectCommand({
        config,
        db: join(dir, 'usage.duckdb'),
        env: { USAGE_API_KEY: sb.apiKey },
        baseUrl: sb.baseUrl,
        now: () => sb.now(),
        log: silentLogger,
        granularity: 'daily',
        from: window[0],
        to: window[1],
        inventory,
      });
    return { sb, db: join(dir, 'usage.duckdb'), run };
  }

  /** The second window, collected without the inventory, sends the fewest frameworks requests; some of its
   *  batches hold exactly full pages, so the cut is what makes it the fewest. */
  async function expectFewestOnSecondRun(t: Awaited<ReturnType<typeof setUp>>): Promise<void> {
    const min = fewest(t.sb, secondFrom, secondTo);
    expect(min.fullBatches).toBeGreaterThan(0);
    t.sb.resetStats();
    expect((await t.run(SECOND, 'never')).exitCode).toBe(0);
    expect(t.sb.stats().byRoute[FRAMEWORKS]).toBe(min.requests);
  }

  /** The inventory's frameworks, and how many of `ids` it holds. */
  async function inventoryFrameworks(db: string, ids: string[] = []): Promise<{ known: number; ofIds: number }> {
    const store = await openStore({ path: db, readOnly: true });
    try {
      const [row] = await rawSql(store).query<{ known: bigint; of_ids: bigint }>(
        'SELECT count(*) AS known, count(*) FILTER (WHERE framework_id IN (SELECT unnest($ids::VARCHAR[]))) AS of_ids FROM frameworks',
        { ids },
      );
      return { known: Number(row!.known), ofIds: Number(row!.of_ids) };
    } finally {
      await store.close();
    }
  }

  it('with no inventory at all, cuts from the frameworks the earlier collection stored', async () => {
    const t = await setUp('usage-fwreq-usage-', tenFrameworksEach);
    expect((await t.run(FIRST, 'never')).exitCode).toBe(0);
    expect(await inventoryFrameworks(t.db)).toEqual({ known: 0, ofIds: 0 });

    await expectFewestOnSecondRun(t);
  }, 120_000);

  it("sizes by the larger of the inventory's count and the usage's, each missing frameworks of its own", async () => {
    // Ten frameworks each. In every other program the tenth is deleted after the second window's start but
    // before the first run's inventory lists them: the usage names it, the inventory does not. In the others it
    // is created after the first window: the inventory lists it, the usage does not. The API lists all ten
    // for the second window.
    const lateAt = NOW - 12 * 3_600_000;
    const deleted: string[] = [];
    const created: string[] = [];
    const t = await setUp('usage-fwreq-both-', (s) => {
      tenFrameworksEach(s);
      let i = 0;
      for (const program of s.world.programs) {
        if (
          s.world.orgById.get(program.org_id)?.billing !== 'current' ||
          !s.world.personal_org_ids.includes(program.org_id)
        )
          continue;
        const f = s.world.frameworksByProgram.get(program.id)![9]!;
        if (i++ % 2 === 0) {
          f.deleted_at = lateAt;
          deleted.push(f.id);
        } else {
          f.created_at = lateAt;
          created.push(f.id);
        }
      }
    });
    expect((await t.run(FIRST, 'auto')).exitCode).toBe(0);
    expect((await inventoryFrameworks(t.db, deleted)).ofIds).toBe(0);
    expect((await inventoryFrameworks(t.db, created)).ofIds).toBe(created.length);

    await expectFewestOnSecondRun(t);
  }, 120_000);
});

// Frameworks requests over HTTP against the sandbox: once the inventory knows how many frameworks each
// program has, no request's last page is exactly full, so a collection sends the fewest requests paging
// allows (one page per 1,000 frameworks of each 100 programs in the API's order), none of them for an
// empty page the API's trailing cursor would otherwise cost.
import { mkdtempSync, writeFileSync } from 'node:fs';
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
      const f: Framework = { ...own[0]!, id: `${own[0]!.id}-x${i}`, name: `extra-${i}`, display_name: `Extra ${i}`, default: false, key: own[0]!.key + i * 7919 };
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
    const programs = listPrograms(sb.world, 'v2_programs', new Set([org.id]), { granularity: 'daily', from, to, now: NOW });
    for (let i = 0; i < programs.length; i += MAX_PROGRAM_IDS) {
      const n = listFrameworks(sb.world, programs.slice(i, i + MAX_PROGRAM_IDS).map((p) => p.id), { granularity: 'daily', from, to, now: NOW }).length;
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
    collectCommand({ config, db, env: { USAGE_API_KEY: sb.apiKey }, baseUrl: sb.baseUrl, now: () => sb.now(), log: silentLogger, granularity: 'daily', from, to });

  beforeAll(async () => {
    sb = await startSandbox({ scenario: 'medium', now: NOW, advance: false, limits: { perMinute: 100_000, perSecondPerRoute: 1_000 } });
    tenFrameworksEach(sb);
    // The first run learns the inventory (every program's frameworks).
    await run('2026-11-18', '2026-11-19');
  }, 120_000);
  afterAll(async () => sb?.close());

  it('sends no request whose last page is exactly full, and so the fewest requests', async () => {
    const store = await openStore({ path: db, readOnly: true });
    const [known] = await rawSql(store).query<{ n: bigint }>('SELECT count(*) AS n FROM frameworks');
    await store.close();
    expect(Number(known!.n)).toBeGreaterThan(0);

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

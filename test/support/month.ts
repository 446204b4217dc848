// Test fixture: a sandbox world's ground truth for one month, loaded into a real DuckDB file through
// the store (usage batches with their coverage rows, and the inventory), as the collector would.
import { createHash } from 'node:crypto';
import { copyFileSync, existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Granularity, Source } from '../../src/domain/granularity.js';
import { expectedRows, type TruthRow } from '../../src/sandbox/truth.js';
import { generateWorld, type World } from '../../src/sandbox/world.js';
import type { Scenario } from '../../src/sandbox/model.js';
import { openStore, type Store } from '../../src/store/store.js';
import type { CoverageRow, UsageBatchSpec } from '../../src/store/types.js';
import { claimBuild, endBuild, keepPrepared } from './prepared.js';
import { RUN_FOLDER } from './tmpRoot.js';
import { appendRows, type UsageRowIn } from './rowLoader.js';

export const DAY = 86_400_000;

export interface Loaded {
  store: Store;
  world: World;
  dir: string;
  from: number;
  to: number;
  now: number;
  truth: Record<Source, TruthRow[]>;
  /** The program whose name was replaced by a formula-looking string. */
  formulaProgramId: string;
}

export function monthRange(month: string): { from: number; to: number } {
  const [y, m] = month.split('-').map(Number) as [number, number];
  return { from: Date.UTC(y, m - 1, 1), to: Date.UTC(y, m, 1) };
}

function periodOf(world: World, programId: string, periodId: string): { start: Date; end: Date | null } {
  const p = world.programById.get(programId)!;
  const i = p.periods.findIndex((x) => x.period_id === periodId);
  const period = p.periods[i]!;
  return { start: new Date(period.start), end: period.end === undefined ? null : new Date(period.end) };
}

function toRow(world: World, r: TruthRow): UsageRowIn {
  const p = periodOf(world, r.program_id, r.period_id);
  return {
    org_id: r.org_id,
    program_id: r.program_id,
    ...(r.framework_id !== undefined ? { framework_id: r.framework_id } : {}),
    period_id: r.period_id,
    period_plan: r.period_plan,
    period_start: p.start,
    period_end: p.end,
    timeframe_start: new Date(r.timeframe_start),
    timeframe_end: new Date(r.timeframe_end),
    metric: r.metric,
    value: r.value,
  };
}

/** `month` loaded as loadMonth() does, its store closed: the folder and the file, for tests that run the CLI on it. */
export async function loadMonthFile(month: string): Promise<{ dir: string; db: string }> {
  const L = await loadMonth({ month });
  await L.store.close();
  return { dir: L.dir, db: L.store.path };
}

/** One write of a month's load, in order: a usage batch with its rows, or a coverage row on its own. */
type Step = { batch: UsageBatchSpec; rows: TruthRow[] } | { coverage: CoverageRow };

/** The month's truth, and the writes that load it: computed without touching a store (a prepared copy needs none). */
function monthPlan(
  world: World,
  o: { g: Granularity; from: number; to: number; now: number; skipOrg?: boolean },
): { truth: Record<Source, TruthRow[]>; steps: Step[] } {
  const { g, from, to, now } = o;
  const runId = 'run-test-1';
  const collectedAt = new Date(now);
  const window = { granularity: g, windowStart: new Date(from), windowEnd: new Date(to), runId, collectedAt };
  const truth = {} as Record<Source, TruthRow[]>;
  const steps: Step[] = [];

  // v1: one batch for every legacy program ('all').
  truth.v1_programs = expectedRows(world, { source: 'v1_programs', granularity: g, from, to, now });
  steps.push({
    batch: {
      table: 'usage_program',
      apiVersion: 'v1',
      ...window,
      scope: {},
      coverage: { source: 'v1_programs', scope: 'all', status: 'complete' },
    },
    rows: truth.v1_programs,
  });

  // v2 programs: one batch per organisation; legacy organisations are not eligible.
  truth.v2_programs = [];
  truth.v2_frameworks = [];
  let skipped = false;
  for (const orgId of world.personal_org_ids) {
    const org = world.orgById.get(orgId)!;
    if (org.billing === 'legacy') {
      steps.push({
        coverage: { ...window, source: 'v2_programs', scope: orgId, status: 'not_eligible', detail: '403' },
      });
      continue;
    }
    const rows = expectedRows(world, { source: 'v2_programs', granularity: g, from, to, now, orgId });
    if (o.skipOrg && !skipped) {
      skipped = true;
      steps.push({ coverage: { ...window, source: 'v2_programs', scope: orgId, status: 'failed', detail: 'test' } });
      continue;
    }
    truth.v2_programs.push(...rows);
    steps.push({
      batch: {
        table: 'usage_program',
        apiVersion: 'v2',
        ...window,
        scope: { orgId },
        coverage: { source: 'v2_programs', scope: orgId, status: 'complete' },
      },
      rows,
    });

    const programIds = [...new Set(rows.map((r) => r.program_id))].sort();
    if (programIds.length === 0) continue;
    const fr = expectedRows(world, { source: 'v2_frameworks', granularity: g, from, to, now, programIds });
    truth.v2_frameworks.push(...fr);
    steps.push({
      batch: {
        table: 'usage_framework',
        ...window,
        scope: { programIds },
        coverage: {
          source: 'v2_frameworks',
          scope: `programs:${programIds[0]}..${programIds.at(-1)}#${programIds.length}`,
          status: 'complete',
        },
      },
      rows: fr,
    });
  }
  return { truth, steps };
}

/**
 * The file of a month already loaded in this run with the same options, to copy instead of loading it
 * again (several files load the same month; the medium world takes most of a test file's time). Only
 * within a run's folder (test/support/tmpRoot.ts), removed at its end, so no file outlives the code
 * that wrote it. Null outside one.
 */
function preparedFile(key: object): string | null {
  const runFolder = process.env[RUN_FOLDER];
  if (!runFolder) return null;
  const name = createHash('sha256').update(JSON.stringify(key)).digest('hex').slice(0, 16);
  return join(runFolder, 'prepared-months', `${name}.duckdb`);
}

/**
 * Loads `month` at `granularity` from the truth, at a clock 3 days after the month's end (so every
 * bucket is final). `skipOrg` leaves one v2 organisation's window as 'failed' coverage (a partial month).
 * `until` loads only the buckets before it (a month in progress) and `now` sets the clock.
 * A month already loaded in this run with the same options is copied from its file (preparedFile).
 */
export async function loadMonth(o: {
  month: string;
  granularity?: Granularity;
  seed?: number;
  scenario?: Scenario;
  skipOrg?: boolean;
  dir?: string;
  until?: number;
  now?: number;
}): Promise<Loaded> {
  const g = o.granularity ?? 'daily';
  const { from, to: monthEnd } = monthRange(o.month);
  const to = o.until ?? monthEnd;
  const now = o.now ?? monthEnd + 3 * DAY;
  const seed = o.seed ?? 7;
  const scenario = o.scenario ?? 'small';
  const world = generateWorld({ seed, scenario, now });
  const dir = o.dir ?? mkdtempSync(join(tmpdir(), 'report-test-'));
  const path = join(dir, 'usage.duckdb');
  const { truth, steps } = monthPlan(world, { g, from, to, now, ...(o.skipOrg ? { skipOrg: true } : {}) });
  const formulaProgramId = truth.v2_programs[0]?.program_id ?? world.programs[0]!.id;
  const prepared = preparedFile({ g, from, to, now, seed, scenario, skipOrg: o.skipOrg === true });
  const build = prepared ? await claimBuild(prepared) : true;
  if (prepared && !build) {
    copyFileSync(prepared, path);
    return { store: await openStore({ path }), world, dir, from, to, now, truth, formulaProgramId };
  }
  let store = await openStore({ path });
  if (!prepared) {
    await writeMonth(store, world, { steps, from, to, now, formulaProgramId });
    return { store, world, dir, from, to, now, truth, formulaProgramId };
  }
  try {
    await writeMonth(store, world, { steps, from, to, now, formulaProgramId });
    await store.close();
    // Closing checkpoints the write-ahead log into the file; a log left over would be part of the database.
    if (existsSync(`${path}.wal`)) throw new Error(`${path}.wal left after close: the file alone is not the database`);
    keepPrepared(path, prepared);
  } finally {
    endBuild(prepared);
  }
  store = await openStore({ path });
  return { store, world, dir, from, to, now, truth, formulaProgramId };
}

/** The writes of monthPlan, then the inventory, as a collection would leave them. */
async function writeMonth(
  store: Store,
  world: World,
  o: { steps: Step[]; from: number; to: number; now: number; formulaProgramId: string },
): Promise<void> {
  const { from, to, now, formulaProgramId } = o;
  for (const step of o.steps) {
    if ('coverage' in step) {
      await store.coverage.record(step.coverage);
      continue;
    }
    const b = store.usage.beginBatch(step.batch);
    await appendRows(
      b,
      step.rows.map((r) => toRow(world, r)),
    );
    await b.commit();
  }

  // Inventory: programs (one named like a formula), frameworks seen before the month and again
  // just before its end (so frameworks deleted during the month are marked deleted), snapshots.
  const seen1 = new Date(from - DAY);
  const seen2 = new Date(to - 6 * 3_600_000);
  const alive = (t: number) => (f: { created_at: number; deleted_at?: number }) =>
    f.created_at <= t && (f.deleted_at === undefined || f.deleted_at > t);
  // Programs: an earlier listing saw every program created by then; the last one, complete for every
  // organisation, no longer lists the deleted ones (so they are marked deleted, names kept).
  const programRow = (p: World['programs'][number]) => ({
    program_id: p.id,
    org_id: p.org_id,
    name: p.id === formulaProgramId ? '=1+1' : p.name,
    region_id: p.region_id,
    created_at: new Date(p.created_at),
  });
  await store.inventory.upsertPrograms(world.programs.filter((p) => p.created_at <= seen1.getTime()).map(programRow), {
    seenAt: seen1,
  });
  await store.inventory.upsertPrograms(world.programs.filter(alive(seen2.getTime())).map(programRow), {
    seenAt: seen2,
    completeForOrgs: world.orgs.map((o) => o.id),
  });
  // The organization listing, as a collection records it (their names are the billing account names).
  for (const o of world.orgs) await store.inventory.upsertOrganization({ orgId: o.id, name: o.name, seenAt: seen2 });
  const fwRow = (f: World['frameworks'][number]) => ({
    framework_id: f.id,
    program_id: f.program_id,
    name: f.name,
    current_state: 'ready',
    created_at: new Date(f.created_at),
  });
  await store.inventory.upsertFrameworks(world.frameworks.filter(alive(seen1.getTime())).map(fwRow), { seenAt: seen1 });
  await store.inventory.upsertFrameworks(world.frameworks.filter(alive(seen2.getTime())).map(fwRow), {
    seenAt: seen2,
    completeForPrograms: world.programs.map((p) => p.id),
  });
  await store.inventory.upsertSnapshots(
    world.snapshots.map((s) => ({
      snapshot_id: s.id,
      program_id: s.program_id,
      name: s.name,
      source_framework_id: s.source_branch_id,
      created_at: new Date(s.created_at),
      manual: s.manual,
      expires_at: s.expires_at === undefined ? null : new Date(s.expires_at),
    })),
    { seenAt: new Date(now) },
  );
}

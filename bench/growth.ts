// `npm run bench -- --growth [--json] [--orgs N] [--days 7,30,91,365] [--rounds N]`: what a routine run
// costs as the history kept grows. One database grows step by step (1 week, 1 month, 3 months, 12 months
// of hourly and daily history by default); at each step an hourly collect as cron runs it, status,
// example query 09, export --dataset after that collect and report --month are run in rounds (two unless
// --rounds says), each in its own process (bench/growthChild.ts), and their wall time, CPU, bytes written
// and peak RSS kept (the median over rounds). History: the `large` scenario's organizations (the first N)
// collected from the sandbox once, then earlier days filled with copies of one collected day, shifted by whole days
// (bench/growth_history_day.sql, bench/growth_history.sql), with complete coverage, so every command sees them as collected. The
// dataset folder is recorded as holding the base and, at each step, every grown day rather than written
// (markDatasetCurrent). Each step starts again from the collected base (database, analyst copy and
// dataset folder) and runs at the same clock, so every step's runs are at the same hour of the day and
// day of the month: today's hourly part of the analyst copy and the month an export prices grow with
// those, not with the history kept. A machine's speed drifts over the hour a run takes, so every later
// step is measured beside the first: the first step's files as its rounds found them are kept, put back
// beside each later step, and every round runs each command on both in turn at the same clock (which goes
// first alternates); the ratios are the median over rounds of a step over the first step beside it.
import { spawn } from 'node:child_process';
import {
  copyFileSync,
  cpSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  statfsSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { packageRoot } from '../src/config/packageRoot.js';
import { rawSql } from '../src/store/rawSql.js';
import { DATASET_LAYOUT, openStore } from '../src/store/store.js';
import type { ExampleTiming, GrowthOp, GrowthOpResult } from './growthChild.js';
import { median } from './measure.js';
import { startSandboxProcess, type SandboxProcess } from './sandboxProcess.js';

const ROOT = packageRoot();
const CHILD = fileURLToPath(new URL('./growthChild.js', import.meta.url));
const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;
/** The sandbox's clock at the first collect: early in its month, so that 1 week of history already holds
 *  the month report --month reads, and every step reports the same days. */
const NOW0 = Date.UTC(2026, 10, 8, 10, 30);
/** Rounds per step unless --rounds says otherwise: two cannot tell a 10% growth from this machine's noise. */
export const DEFAULT_ROUNDS = 2;
const QUERY = 'top_frameworks_by_compute'; // queries/examples/09_top_frameworks_by_compute.sql
// Unthrottled (the rate limit is not what grows); collect.memory_limit raised from 128MB, at which the
// catch-up collect after growing ran out of memory (2026-11-28: 121.9 of 122.0 MiB pinned).
const CONFIG = `[api.rate_limit]\nper_minute = 100000\nper_second_per_route = 10000\n[collect]\nmemory_limit = "256MB"\n`;

/** The operations each round runs and times. */
type RoundOp = Exclude<GrowthOp['op'], 'examples' | 'seal'>;

export interface GrowthStep {
  days: number;
  dbBytes: number;
  copyBytes: number;
  datasetBytes: number;
  collectedBytes: number;
  /** The clock of the last round (an epoch millisecond): the examples run at it. */
  clock: number;
  ops: Record<RoundOp, GrowthOpResult[]>;
  /** Every step after the first: the first step's files measured in the same rounds, in turn with these. */
  paired?: Record<RoundOp, GrowthOpResult[]>;
  /** The last step only: every example query on the analyst copy and on the database. */
  examples?: ExampleTiming[];
}

const iso = (t: number) => new Date(t).toISOString();

/** Bytes below a path (a file, or a folder's files). */
function bytesOf(path: string | string[]): number {
  if (Array.isArray(path)) return path.reduce((n, p) => n + bytesOf(p), 0);
  if (!existsSync(path)) return 0;
  const s = statSync(path);
  if (!s.isDirectory()) return s.size;
  return readdirSync(path, { recursive: true, encoding: 'utf8' }).reduce((n, f) => {
    const st = statSync(join(path, f));
    return n + (st.isFile() ? st.size : 0);
  }, 0);
}

/** The analyst copy of a database and the folder of its parts. */
const copyOf = (db: string) => [db.replace(/\.duckdb$/, '.analyst.duckdb'), db.replace(/\.duckdb$/, '.analyst.parts')];

function runOp(spec: GrowthOp): Promise<GrowthOpResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CHILD, JSON.stringify(spec)], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.on('exit', (code) => {
      const line = out.trim().split('\n').at(-1) ?? '';
      if (code !== 0 || !line.startsWith('{')) reject(new Error(`${spec.op} exited with ${code}: ${out.slice(-500)}`));
      else resolve(JSON.parse(line) as GrowthOpResult);
    });
  });
}

/** Fills [firstDay, endDay) of one granularity with shifted copies of `sourceDay` (growth_history.sql). */
export async function fillHistory(
  db: string,
  granularity: 'hourly' | 'daily',
  firstDay: number,
  endDay: number,
  sourceDay: number,
) {
  if (firstDay >= endDay) return;
  const store = await openStore({ path: db });
  try {
    const sql = rawSql(store);
    const params: Record<string, unknown> = {
      granularity,
      source_day: new Date(sourceDay),
      first_day: new Date(firstDay),
      end_day: new Date(endDay),
      run_id: `history-${granularity}-${iso(firstDay).slice(0, 10)}`,
      at: new Date(NOW0),
    };
    const statements = (file: string) =>
      readFileSync(join(ROOT, 'bench', file), 'utf8')
        .replace(/^--.*$/gm, '')
        .split(';')
        .map((x) => x.trim())
        .filter(Boolean);
    const run = async (stmt: string, all: Record<string, unknown>) =>
      sql.run(stmt, Object.fromEntries(Object.entries(all).filter(([k]) => stmt.includes(`$${k}`))));
    for (let day = firstDay; day < endDay; day += DAY_MS)
      for (const stmt of statements('growth_history_day.sql'))
        await run(stmt, { ...params, shift: Math.round((day - sourceDay) / DAY_MS) });
    for (const stmt of statements('growth_history.sql')) await run(stmt, params);
  } finally {
    await store.close();
  }
}

// Parameters: $dir VARCHAR. Every run so far counts as taken in by the dataset folder.
const RUNS_TAKEN_IN_SQL = 'INSERT OR IGNORE INTO export_runs SELECT DISTINCT $dir, run_id FROM coverage';
// Parameters: $dir, $layout, $context_digest VARCHAR, $at TIMESTAMPTZ.
const DATASET_RECORD_SQL = 'INSERT OR REPLACE INTO export_datasets VALUES ($dir, $layout, $context_digest, $at)';

/**
 * The dataset folder recorded as holding everything collected so far, without writing it: a full
 * export of the base takes over 20 minutes here, and an export after a run looks only at that run's
 * windows and months, so its cost is the same whether the folder holds the earlier files or not.
 */
async function markDatasetCurrent(c: Ctx, now: number): Promise<void> {
  mkdirSync(c.dataset, { recursive: true });
  const store = await openStore({ path: c.db });
  try {
    const digest = await store.dataset.contextDigest(true);
    const sql = rawSql(store);
    await sql.run(DATASET_RECORD_SQL, {
      dir: c.dataset,
      layout: DATASET_LAYOUT,
      context_digest: `${digest.prices}#${digest.names ?? ''}`,
      at: new Date(now),
    });
    await sql.run(RUNS_TAKEN_IN_SQL, { dir: c.dataset });
  } finally {
    await store.close();
  }
}

/** The first UTC day the database holds at a granularity. */
async function firstDay(db: string, granularity: string): Promise<number> {
  const store = await openStore({ path: db, readOnly: true });
  try {
    const [r] = await rawSql(store).query<{ t: Date }>(
      'SELECT min(timeframe_start) AS t FROM usage_program_buckets WHERE granularity = $g',
      { g: granularity },
    );
    return Math.floor(r!.t.getTime() / DAY_MS) * DAY_MS;
  } finally {
    await store.close();
  }
}

interface Ctx {
  dir: string;
  db: string;
  config: string;
  dataset: string;
  sandbox: SandboxProcess;
  orgs: string[];
}

async function collectAt(c: Ctx, now: number): Promise<GrowthOpResult> {
  await c.sandbox.setClock(iso(now));
  const r = await runOp({
    op: 'collect',
    db: c.db,
    config: c.config,
    apiKey: c.sandbox.apiKey,
    baseUrl: c.sandbox.baseUrl,
    now,
    orgs: c.orgs,
  });
  if (r.detail.exitCode !== 0) throw new Error(`collect at ${iso(now)} exited with ${String(r.detail.exitCode)}`);
  return r;
}

/** Every example query on the analyst copy and on the database itself (what analysts opened before the copy
 *  was a file over Parquet parts), best of three each (one run when it takes seconds; stopped at a cap). */
async function examplesAt(c: Ctx, now: number, say: (s: string) => void): Promise<ExampleTiming[]> {
  const r = await runOp({ op: 'examples', db: c.db, config: c.config, now });
  const timings = r.detail.examples as ExampleTiming[];
  const ms = (v: number | null) => (v === null ? 'did not finish' : `${v.toFixed(0)} ms`);
  const x = (v: number | null) => (v !== null ? ` (x${v.toFixed(2)})` : '');
  for (const e of timings) {
    say(
      `  example ${e.name}: copy ${ms(e.copyMs)}, database ${ms(e.dbMs)}${x(copyOverDb(e))}; ` +
        `opened and run once: copy ${ms(e.copyFirstMs)}, database ${ms(e.dbFirstMs)}${x(copyOverDb(e, 'first'))}`,
    );
  }
  return timings;
}

/** An example's time on the copy over its time on the database (best, or the first run with the opening),
 *  when both finished. */
function copyOverDb(e: ExampleTiming, which: 'best' | 'first' = 'best'): number | null {
  const [copy, db] = which === 'best' ? [e.copyMs, e.dbMs] : [e.copyFirstMs, e.dbFirstMs];
  return copy !== null && db !== null ? copy / db : null;
}

/** The database, its analyst copy and the dataset folder, as saved by saveFiles (or restored from it). */
const stepFiles = (c: Ctx) => [c.db, ...copyOf(c.db), c.dataset];

/** Keeps the step's files in `dir/name` (the collected base; the first step before its rounds). */
function saveFiles(c: Ctx, name: string): void {
  const saved = join(c.dir, name);
  rmSync(saved, { recursive: true, force: true });
  mkdirSync(saved, { recursive: true });
  for (const f of stepFiles(c)) if (existsSync(f)) cpSync(f, join(saved, f.slice(c.dir.length)), { recursive: true });
}

/** Puts the files saved as `name` in place of `into`'s (c's own, or the paired folder's). */
function restoreFiles(c: Ctx, name: string, into: Ctx = c): void {
  const targets = stepFiles(into);
  stepFiles(c).forEach((f, i) => {
    const target = targets[i]!;
    rmSync(target, { recursive: true, force: true });
    const saved = join(c.dir, name, f.slice(c.dir.length));
    if (!existsSync(saved)) return;
    if (statSync(saved).isDirectory()) cpSync(saved, target, { recursive: true });
    else copyFileSync(saved, target);
  });
}

// The tables that record a dataset folder by its absolute path (migrations 004 and 014).
const DATASET_TABLES = ['export_runs', 'export_datasets', 'export_partitions'] as const;

/** The first step's files, as its rounds found them, in `dir/paired/`, their dataset records moved with them. */
async function pairedFirst(c: Ctx): Promise<Ctx> {
  const dir = join(c.dir, 'paired');
  mkdirSync(dir, { recursive: true });
  const p: Ctx = { ...c, dir, db: join(dir, 'usage.duckdb'), dataset: join(dir, 'dataset') };
  restoreFiles(c, 'first', p);
  const store = await openStore({ path: p.db });
  try {
    for (const t of DATASET_TABLES)
      await rawSql(store).run(`UPDATE ${t} SET dataset_dir = $to WHERE dataset_dir = $from`, {
        from: c.dataset,
        to: p.dataset,
      });
  } finally {
    await store.close();
  }
  return p;
}

/** Grows the base to `days` of history and catches up (not measured); returns the clock it ends at. */
async function grow(c: Ctx, days: number, say: (s: string) => void): Promise<number> {
  let now = NOW0;
  const today = Math.floor(now / DAY_MS) * DAY_MS;
  for (const g of ['hourly', 'daily'] as const) {
    const have = await firstDay(c.db, g);
    const t0 = performance.now();
    await fillHistory(c.db, g, today - days * DAY_MS, have, today - 2 * DAY_MS);
    say(
      `  ${g} history from ${iso(today - days * DAY_MS).slice(0, 10)} (${((performance.now() - t0) / 1000).toFixed(0)} s)`,
    );
  }
  // The grown days are recorded in the dataset folder as the base is; the export after the catch-up
  // collect then writes what that collect replaced, as after any routine run.
  await markDatasetCurrent(c, now);
  // Catching up on the grown history (alerts priced, the copy's parts written): not measured.
  const t = performance.now();
  now += HOUR_MS;
  await collectAt(c, now);
  say(
    `  caught up: a collect that prices and publishes the grown days (${((performance.now() - t) / 1000).toFixed(0)} s)`,
  );
  const s = await runOp({ op: 'seal', db: c.db, config: c.config });
  say(
    `  caught up: the copy's closed hourly months sealed (${String(s.detail.publishes)} months, ${s.wallS.toFixed(0)} s)`,
  );
  // And an export of what it replaced, so the measured exports find the folder as a routine one does.
  const e = await opAt(c, 'export', now);
  say(`  caught up: export --dataset (${e.wallS.toFixed(0)} s)`);
  return now;
}

const emptyOps = (): GrowthStep['ops'] => ({ collect: [], status: [], query: [], export: [], report: [] });

/** One command on one set of files at `now`. */
function opAt(c: Ctx, op: RoundOp, now: number): Promise<GrowthOpResult> {
  if (op === 'collect') return collectAt(c, now);
  if (op === 'export') return runOp({ op, db: c.db, config: c.config, dataset: c.dataset, now });
  if (op === 'status') return runOp({ op, db: c.db, config: c.config, now });
  if (op === 'query') return runOp({ op, db: c.db, config: c.config, example: QUERY, now });
  return runOp({ op, db: c.db, config: c.config, month: iso(now).slice(0, 7), out: join(c.dir, 'reports'), now });
}

/** One step: grown from the base, then the measured rounds, each command on the step's files and on the
 *  paired first step's (when given) at the same clock. */
async function step(c: Ctx, days: number, rounds: number, say: (s: string) => void, pair?: Ctx): Promise<GrowthStep> {
  let now = await grow(c, days, say);
  if (!pair) saveFiles(c, 'first');
  const ops = emptyOps();
  const paired = emptyOps();
  let collectedBytes = 0;
  for (let r = 0; r < rounds; r++) {
    now += HOUR_MS;
    for (const op of ['collect', 'export', 'status', 'query', 'report'] as const) {
      // Odd rounds run the paired first step's command first: neither side always goes second.
      if (pair && r % 2 === 1) paired[op].push(await opAt(pair, op, now));
      const before = (await c.sandbox.stats()).bytesSent;
      ops[op].push(await opAt(c, op, now));
      if (op === 'collect') collectedBytes += (await c.sandbox.stats()).bytesSent - before;
      if (pair && r % 2 === 0) paired[op].push(await opAt(pair, op, now));
    }
  }
  return {
    days,
    dbBytes: bytesOf(c.db),
    copyBytes: bytesOf(copyOf(c.db)),
    datasetBytes: bytesOf(c.dataset),
    collectedBytes: collectedBytes / rounds,
    clock: now,
    ops,
    ...(pair ? { paired } : {}),
  };
}

export interface GrowthFlags {
  json: boolean;
  orgs: number;
  days: number[];
  rounds: number;
}

function freeBytes(dir: string): number {
  const s = statfsSync(dir);
  return s.bavail * s.bsize;
}

export async function growthBench(flags: GrowthFlags, say: (s: string) => void): Promise<GrowthStep[]> {
  const dir = join(ROOT, '.bench', 'growth');
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const config = join(dir, 'usage.toml');
  writeFileSync(config, CONFIG);
  const sandbox = await startSandboxProcess({ scenario: 'large', latencyMs: 0, now: iso(NOW0) });
  try {
    await sandbox.setPace({ latency_ms: 0, per_minute: 10_000_000, per_second_per_route: 1_000_000 });
    const res = await fetch(`${sandbox.baseUrl}/users/me/organizations`, {
      headers: { authorization: `Bearer ${sandbox.apiKey}` },
    });
    const all = ((await res.json()) as { organizations: { id: string }[] }).organizations.map((o) => o.id);
    const c: Ctx = {
      dir,
      db: join(dir, 'usage.duckdb'),
      config,
      dataset: join(dir, 'dataset'),
      sandbox,
      orgs: all.slice(0, flags.orgs),
    };
    const t = performance.now();
    await collectAt(c, NOW0);
    say(
      `base: ${c.orgs.length} of ${all.length} organizations collected at ${iso(NOW0)} (${((performance.now() - t) / 1000).toFixed(0)} s)`,
    );
    await markDatasetCurrent(c, NOW0);
    saveFiles(c, 'base');
    const steps: GrowthStep[] = [];
    for (const days of flags.days) {
      restoreFiles(c, 'base');
      // The database and the copy's parts grow by what they hold a day (the dataset is recorded, not
      // written); half again for what an export spills; and the first step's files put back beside it.
      // An upper bound: the base also holds fixed content.
      const held = Math.max(1, (NOW0 - (await firstDay(c.db, 'hourly'))) / DAY_MS);
      const need =
        ((bytesOf(c.db) + bytesOf(copyOf(c.db))) / held) * 1.5 * Math.max(0, days - held) + bytesOf(join(dir, 'first'));
      say(
        `${days} days need about ${(need / 1e9).toFixed(1)} GB more; ${(freeBytes(dir) / 1e9).toFixed(0)} GB are free`,
      );
      if (need > freeBytes(dir)) throw new Error(`not enough free disk for ${days} days of history`);
      say(`growing to ${days} days of history`);
      const s = await step(c, days, flags.rounds, say, steps.length > 0 ? await pairedFirst(c) : undefined);
      say(growthLine(s, steps[0]));
      if (days === flags.days.at(-1)) s.examples = await examplesAt(c, s.clock, say);
      steps.push(s);
    }
    return steps;
  } finally {
    await sandbox.stop();
  }
}

type OpFigure = 'wallS' | 'cpuS' | 'writtenBytes' | 'peakRssMb';
const medOf = (ops: GrowthStep['ops'], op: RoundOp, k: OpFigure) => median(ops[op].map((r) => r[k]));
const med = (s: GrowthStep, op: RoundOp, k: OpFigure) => medOf(s.ops, op, k);
const ROUND_OPS = ['collect', 'status', 'query', 'export', 'report'] as const;

const opsLine = (ops: GrowthStep['ops']) =>
  ROUND_OPS.map(
    (op) =>
      `${op} ${medOf(ops, op, 'wallS').toFixed(2)} s / ${medOf(ops, op, 'cpuS').toFixed(2)} CPU-s / ${(medOf(ops, op, 'writtenBytes') / 1e6).toFixed(0)} MB`,
  ).join('; ');

export function growthLine(s: GrowthStep, first?: GrowthStep): string {
  const line = `  ${s.days} days: db ${(s.dbBytes / 1e9).toFixed(2)} GB, copy ${(s.copyBytes / 1e9).toFixed(2)} GB, dataset ${(s.datasetBytes / 1e9).toFixed(2)} GB; ${opsLine(s.ops)}; collected ${(s.collectedBytes / 1e6).toFixed(1)} MB`;
  return s.paired ? `${line}\n  beside it, ${first?.days ?? 'the first'} days: ${opsLine(s.paired)}` : line;
}

/** The last line of --growth --json: the largest step over the smallest. */
export function growthJson(steps: GrowthStep[]): Record<string, unknown> {
  const first = steps[0]!;
  const last = steps.at(-1)!;
  // Against the first step as measured beside the last: the median of each round's ratio, both sides at
  // the same clock in that round; else against the first step as measured in its own rounds.
  const paired = last.paired;
  const ratio = (op: RoundOp, k: OpFigure = 'wallS') =>
    Number(
      (paired
        ? median(last.ops[op].map((r, i) => r[k] / Math.max(1e-9, paired[op][i]![k])))
        : med(last, op, k) / Math.max(1e-9, medOf(first.ops, op, k))
      ).toFixed(3),
    );
  return {
    history_months: Number((last.days / 30.4).toFixed(1)),
    history_days: steps.map((s) => s.days),
    paired: last.paired !== undefined,
    growth_hourly_run: ratio('collect'),
    growth_status: ratio('status'),
    growth_query: ratio('query'),
    growth_export: ratio('export'),
    growth_report: ratio('report'),
    growth_cpu: Object.fromEntries(ROUND_OPS.map((op) => [op, ratio(op, 'cpuS')])),
    growth_hourly_run_written: ratio('collect', 'writtenBytes'),
    written_per_collected_byte: Number(
      (med(last, 'collect', 'writtenBytes') / Math.max(1, last.collectedBytes)).toFixed(3),
    ),
    // The slowest example query on the copy against the database, at the last step.
    examples_copy_over_db: last.examples
      ? Number(Math.max(...last.examples.map((e) => copyOverDb(e) ?? 0)).toFixed(3))
      : null,
    // The same for each example's first run in a process, the file's opening included: what `query` costs.
    examples_first_copy_over_db: last.examples
      ? Number(Math.max(...last.examples.map((e) => copyOverDb(e, 'first') ?? 0)).toFixed(3))
      : null,
    examples: last.examples ?? null,
    steps: steps.map((s) => ({
      days: s.days,
      db_bytes: s.dbBytes,
      copy_bytes: s.copyBytes,
      dataset_bytes: s.datasetBytes,
      collected_bytes: s.collectedBytes,
      ...opsJson(s.ops),
      ...(s.paired ? { paired: opsJson(s.paired) } : {}),
    })),
  };
}

function opsJson(ops: GrowthStep['ops']): Record<string, Record<string, number>> {
  return Object.fromEntries(
    ROUND_OPS.map((op) => [
      op,
      {
        wall_s: medOf(ops, op, 'wallS'),
        cpu_s: medOf(ops, op, 'cpuS'),
        written_bytes: medOf(ops, op, 'writtenBytes'),
        peak_rss_mb: medOf(ops, op, 'peakRssMb'),
      },
    ]),
  );
}

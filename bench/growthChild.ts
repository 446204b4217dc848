// One operation of the growth benchmark in its own process, as cron or an analyst runs it: an
// incremental collect, status, an example query, export --dataset or report --month, through the
// command's own function; or every example query on the analyst copy and on the database itself. Prints one JSON line: what it did, its wall time, and the process's own CPU,
// bytes written (getrusage's block outputs) and peak RSS.
import { readFileSync } from 'node:fs';
import { collectCommand } from '../src/cli/collect.js';
import { exportCommand } from '../src/cli/export.js';
import { exampleQueries, queryCommand } from '../src/cli/query.js';
import { reportCommand } from '../src/cli/report.js';
import { statusCommand } from '../src/cli/status.js';
import { createLogger } from '../src/log.js';
import { analystCopyPath, publishAnalystCopy } from '../src/store/publish.js';
import { rawSql } from '../src/store/rawSql.js';
import { openStore } from '../src/store/store.js';
import { atClock } from './atClock.js';

export type GrowthOp =
  | { op: 'collect'; db: string; config: string; apiKey: string; baseUrl: string; now: number; orgs: string[] }
  | { op: 'status'; db: string; config: string; now: number }
  | { op: 'query'; db: string; config: string; example: string; now: number }
  | { op: 'export'; db: string; config: string; dataset: string; now: number }
  | { op: 'report'; db: string; config: string; month: string; out: string; now: number }
  | { op: 'examples'; db: string; config: string; now: number }
  | { op: 'seal'; db: string; config: string };

/** One example query's best wall time on the analyst copy and on the database, and its first run's with
 *  the file's opening (what one `query` pays after Node's start); null: it did not finish (stopped at
 *  EXAMPLE_CAP_MS, or failed: out of DuckDB memory, say; the reason goes to stderr). */
export interface ExampleTiming {
  name: string;
  copyMs: number | null;
  dbMs: number | null;
  copyFirstMs: number | null;
  dbFirstMs: number | null;
}

interface Tries {
  bestMs: number | null;
  firstMs: number | null;
}

/** Best of this many runs, when a run takes less than EXAMPLE_REPEAT_BELOW_MS (else one run). */
const EXAMPLE_TRIES = 3;
const EXAMPLE_REPEAT_BELOW_MS = 10_000;
/** A query still running after this long is interrupted and has no time: the bench goes on. */
const EXAMPLE_CAP_MS = 300_000;

export interface GrowthOpResult {
  op: GrowthOp['op'];
  wallS: number;
  cpuS: number;
  writtenBytes: number;
  peakRssMb: number;
  detail: Record<string, unknown>;
}

const log = createLogger({ level: 'warn', json: true });

/** Best wall time of `sql` on a file opened read-only, as `query` opens the copy, and the first run's from
 *  before the opening; null when it did not finish. */
async function timeTries(path: string, sql: string): Promise<Tries> {
  const opened = performance.now();
  const store = await openStore({ path, readOnly: true, log });
  try {
    let best = Infinity;
    let firstMs: number | null = null;
    for (let i = 0; i < EXAMPLE_TRIES; i++) {
      const t0 = performance.now();
      const cap = setTimeout(() => store.interrupt(), EXAMPLE_CAP_MS);
      try {
        await rawSql(store).queryTable(sql);
      } catch (err) {
        const why = performance.now() - t0 >= EXAMPLE_CAP_MS ? 'stopped at the cap' : (err as Error).message;
        process.stderr.write(`${path}: ${why.split('\n')[0]}\n`);
        return { bestMs: null, firstMs };
      } finally {
        clearTimeout(cap);
      }
      firstMs ??= performance.now() - opened;
      best = Math.min(best, performance.now() - t0);
      if (best >= EXAMPLE_REPEAT_BELOW_MS) break;
    }
    return { bestMs: best, firstMs };
  } finally {
    await store.close();
  }
}

// Parameters: none. The analyst copy's hourly parts still a day each.
const HOURLY_DAY_PARTS_SQL = "SELECT count(*) AS n FROM analyst_parts WHERE part LIKE 'hourly/____-__-__'";

/** Publishes until no hourly month is left to seal (a publish seals one): the catch-up after growing, so
 *  that the measured rounds find the copy as a routine run does, its closed months sealed long ago. */
async function sealAll(db: string): Promise<number> {
  const store = await openStore({ path: db, log });
  const dayParts = async () => (await rawSql(store).query<{ n: bigint }>(HOURLY_DAY_PARTS_SQL))[0]!.n;
  let publishes = 0;
  try {
    for (let before = await dayParts(); ; publishes++) {
      await publishAnalystCopy(store, { log });
      const after = await dayParts();
      if (after === before) return publishes;
      before = after;
    }
  } finally {
    await store.close();
  }
}

/** Every shipped example on the analyst copy (what `query` reads) and on the database it is published from. */
async function examples(db: string, now: number): Promise<ExampleTiming[]> {
  const out: ExampleTiming[] = [];
  for (const e of exampleQueries()) {
    const sql = atClock(readFileSync(e.file, 'utf8'), now);
    const copy = await timeTries(analystCopyPath(db), sql);
    const onDb = await timeTries(db, sql);
    out.push({
      name: e.name,
      copyMs: copy.bestMs,
      dbMs: onDb.bestMs,
      copyFirstMs: copy.firstMs,
      dbFirstMs: onDb.firstMs,
    });
  }
  return out;
}

async function run(spec: GrowthOp): Promise<Record<string, unknown>> {
  const common = { db: spec.db, config: spec.config, log };
  switch (spec.op) {
    case 'collect': {
      const r = await collectCommand({
        ...common,
        env: { USAGE_API_KEY: spec.apiKey },
        baseUrl: spec.baseUrl,
        now: () => spec.now,
        orgs: spec.orgs.join(','),
        inventory: 'never',
      });
      return { exitCode: r.exitCode, requests: r.requests, rows: r.rows, status: r.status };
    }
    case 'status': {
      await statusCommand({ ...common, now: () => spec.now });
      return {};
    }
    case 'query': {
      const e = exampleQueries().find((q) => q.name === spec.example);
      if (e === undefined) throw new Error(`no example query ${spec.example}`);
      const r = await queryCommand({ ...common, sql: atClock(readFileSync(e.file, 'utf8'), spec.now) });
      return { rows: r.rows.length };
    }
    case 'export': {
      const r = await exportCommand({ ...common, dataset: spec.dataset, now: () => spec.now });
      return { written: (r as { written?: unknown }).written ?? null };
    }
    case 'report': {
      const r = await reportCommand({
        ...common,
        month: spec.month,
        out: spec.out,
        format: 'parquet',
        now: () => spec.now,
      });
      return { exitCode: r.exitCode };
    }
    case 'examples':
      return { examples: await examples(spec.db, spec.now) };
    case 'seal':
      return { publishes: await sealAll(spec.db) };
  }
}

const spec = JSON.parse(process.argv[2] ?? '{}') as GrowthOp;
const t0 = performance.now();
const detail = await run(spec);
const wallS = (performance.now() - t0) / 1000;
const u = process.resourceUsage();
const out: GrowthOpResult = {
  op: spec.op,
  wallS,
  cpuS: (u.userCPUTime + u.systemCPUTime) / 1e6,
  writtenBytes: u.fsWrite * 512,
  peakRssMb: u.maxRSS / 1024,
  detail,
};
process.stdout.write(JSON.stringify(out) + '\n');
process.exit(0);

// export --dataset: the Hive-partitioned Parquet dataset reads back exactly with DuckDB and with
// pyarrow's dataset API (an independent reader), and a second export after one more collect
// rewrites exactly the partitions whose rows changed.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { copyFileSync, existsSync, mkdtempSync, readFileSync, statSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { collectCommand } from '../../src/cli/collect.js';
import { exportCommand } from '../../src/cli/export.js';
import type { ExportResult } from '../../src/export/dataset.js';
import { silentLogger } from '../../src/log.js';
import { startSandbox } from '../../src/sandbox/server.js';
import { quoteLiteral } from '../../src/store/sql.js';
import { openStore } from '../../src/store/store.js';
import { demoCopy } from '../support/demo.js';
import { venvPython } from '../support/python.js';
import { rawSql } from '../../src/store/rawSql.js';

const NOW = Date.parse('2026-11-21T10:37:00Z');
const LATER = NOW + 3 * 3_600_000;
const LATEST = LATER + 2 * 3_600_000;
const PRICES = join(process.cwd(), 'config/prices.toml');

// Every column as exact text: integers and decimals as digits, timestamps as epoch microseconds.
const TS = (c: string) => `CAST(epoch_us(${c}) AS VARCHAR) AS ${c}`;
const COLUMNS: Record<string, { read: string[]; sql: string[] }> = {
  usage_program: {
    read: [
      'granularity',
      'month',
      'api_version',
      'org_id',
      'program_id',
      'period_id',
      'period_plan',
      'period_start',
      'period_end',
      'timeframe_start',
      'timeframe_end',
      'metric',
      'value',
      'run_id',
      'collected_at',
    ],
    sql: [
      'granularity',
      "strftime(timezone('UTC', timeframe_start), '%Y-%m') AS month",
      'api_version',
      'org_id',
      'program_id',
      'period_id',
      'period_plan',
      TS('period_start'),
      TS('period_end'),
      TS('timeframe_start'),
      TS('timeframe_end'),
      'metric',
      'CAST(value AS VARCHAR) AS value',
      'run_id',
      TS('collected_at'),
    ],
  },
  usage_framework: {
    read: [
      'granularity',
      'month',
      'org_id',
      'program_id',
      'framework_id',
      'period_id',
      'period_plan',
      'period_start',
      'period_end',
      'timeframe_start',
      'timeframe_end',
      'metric',
      'value',
      'run_id',
      'collected_at',
    ],
    sql: [
      'granularity',
      "strftime(timezone('UTC', timeframe_start), '%Y-%m') AS month",
      'org_id',
      'program_id',
      'framework_id',
      'period_id',
      'period_plan',
      TS('period_start'),
      TS('period_end'),
      TS('timeframe_start'),
      TS('timeframe_end'),
      'metric',
      'CAST(value AS VARCHAR) AS value',
      'run_id',
      TS('collected_at'),
    ],
  },
  spend_daily: {
    read: [
      'month',
      'line_id',
      'granularity',
      'usage_day',
      'program_id',
      'framework_id',
      'metric',
      'quantity_raw',
      'quantity',
      'cost',
      'unpriced_reason',
    ],
    sql: [
      "strftime(billing_month, '%Y-%m') AS month",
      'line_id',
      'granularity',
      'CAST(usage_day AS VARCHAR) AS usage_day',
      'program_id',
      'framework_id',
      'metric',
      'CAST(quantity_raw AS VARCHAR) AS quantity_raw',
      'CAST(quantity AS VARCHAR) AS quantity',
      'CAST(cost AS VARCHAR) AS cost',
      'unpriced_reason',
    ],
  },
  programs: {
    read: ['program_id', 'org_id', 'name', 'created_at', 'deleted_at'],
    sql: ['program_id', 'org_id', 'name', TS('created_at'), TS('deleted_at')],
  },
};
// Each billing month's granularity, and a month's rows as the analysts' view gives them ($month 'YYYY-MM').
const MONTH_GRANULARITIES =
  "SELECT strftime(billing_month, '%Y-%m') AS month, granularity FROM spend_month_granularity ORDER BY month";
const VIEW_ROWS = 'CREATE OR REPLACE TEMP TABLE view_spend_daily AS SELECT * FROM spend_daily';
const VIEW_MONTH = "SELECT * FROM view_spend_daily WHERE strftime(billing_month, '%Y-%m') = $month";
/** Rows in the order of their JSON text, each row's text made once (not twice per comparison). */
const sortRows = (rows: (string | null)[][]) =>
  rows
    .map((r) => ({ key: JSON.stringify(r), r }))
    .sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0))
    .map((x) => x.r);
const glob = (dataset: string) =>
  dataset === 'programs'
    ? `${dataset}/*.parquet`
    : dataset === 'spend_daily'
      ? `${dataset}/*/*.parquet`
      : `${dataset}/*/*/*.parquet`;

async function fileStates(dir: string): Promise<Map<string, { sha: string; mtimeMs: number; ino: number }>> {
  const out = new Map<string, { sha: string; mtimeMs: number; ino: number }>();
  for (const e of await readdir(dir, { recursive: true, withFileTypes: true })) {
    if (!e.isFile()) continue;
    const p = join(e.parentPath, e.name);
    const st = statSync(p);
    out.set(relative(dir, p), { sha: createHashHex(readFileSync(p)), mtimeMs: st.mtimeMs, ino: st.ino });
  }
  return out;
}

describe('export --dataset', { timeout: 300_000 }, () => {
  const dir = mkdtempSync(join(tmpdir(), 'usage-export-'));
  const db = join(dir, 'usage.duckdb');
  const dataset = join(dir, 'dataset');
  let first: ExportResult;

  /** The SELECT of a dataset's columns as text: from the database, or read back from the dataset's files. */
  function selects(name: string, c: { read: string[]; sql: string[] }): { db: string; files: string } {
    const path = quoteLiteral(join(dataset, glob(name)));
    const fileColumns = c.sql.map((s) =>
      s.replace(/strftime\([^)]*\)\) AS month|strftime\(billing_month, '%Y-%m'\) AS month/, 'month'),
    );
    // Every column as its text, as String() makes it of a value read into JavaScript.
    const asText = (from: string) =>
      `SELECT ${c.read.map((k) => `CAST("${k}" AS VARCHAR) AS "${k}"`).join(', ')} FROM (${from})`;
    return {
      db: asText(`SELECT ${c.sql.join(', ')} FROM ${name}`),
      files: asText(
        `SELECT ${fileColumns.join(', ')} FROM read_parquet(${path}, hive_partitioning = true, hive_types_autocast = false)`,
      ),
    };
  }

  /** Rows of each dataset in the database, as sorted lists of text (for a reader outside DuckDB). */
  async function dbRows(): Promise<Record<string, (string | null)[][]>> {
    const store = await openStore({ path: db, readOnly: true });
    try {
      const out: Record<string, (string | null)[][]> = {};
      for (const [name, c] of Object.entries(COLUMNS)) {
        const rows = await rawSql(store).query<Record<string, string | null>>(selects(name, c).db);
        out[name] = sortRows(rows.map((r) => c.read.map((k) => r[k] ?? null)));
      }
      return out;
    } finally {
      await store.close();
    }
  }

  /**
   * Per dataset: its rows in the database, and the rows that database and files do not have in common,
   * each side's surplus counted with its repeats (EXCEPT ALL both ways: both empty when the two hold the
   * same rows the same number of times), read back with DuckDB's hive partitioning. Compared in DuckDB:
   * bringing every row into JavaScript twice took most of this file's time.
   */
  async function datasetDiff(): Promise<Record<string, { rows: number; onlyDb: unknown[]; onlyFiles: unknown[] }>> {
    const store = await openStore({ path: db, readOnly: true });
    try {
      const out: Record<string, { rows: number; onlyDb: unknown[]; onlyFiles: unknown[] }> = {};
      for (const [name, c] of Object.entries(COLUMNS)) {
        const q = selects(name, c);
        const [count] = await rawSql(store).query<{ n: bigint }>(`SELECT count(*) AS n FROM (${q.db})`);
        out[name] = {
          rows: Number(count!.n),
          onlyDb: await rawSql(store).query(`${q.db} EXCEPT ALL ${q.files} LIMIT 20`),
          onlyFiles: await rawSql(store).query(`${q.files} EXCEPT ALL ${q.db} LIMIT 20`),
        };
      }
      return out;
    } finally {
      await store.close();
    }
  }

  /** `export --dataset` of the database into the dataset folder, as of `now`. */
  const exportAt = (now: number) =>
    exportCommand({ db, dataset, format: 'parquet,arrow', prices: PRICES, now: () => now, log: silentLogger });

  /** One collect from the `small` sandbox as of `now` (inventory not read); its run id. */
  async function collectAt(now: number, granularity: string): Promise<string> {
    const sandbox = await startSandbox({ port: 0, scenario: 'small', now });
    try {
      const c = await collectCommand({
        db,
        env: { ...process.env, USAGE_API_KEY: sandbox.apiKey },
        baseUrl: sandbox.baseUrl,
        granularity,
        inventory: 'never',
        now: () => now,
        log: silentLogger,
      });
      expect(c.exitCode).toBe(0);
      return c.runId;
    } finally {
      await sandbox.close();
    }
  }

  /** Every dataset's files hold exactly the database's rows. */
  async function expectDatasetEqualsDb(): Promise<void> {
    for (const [name, d] of Object.entries(await datasetDiff()))
      expect({ onlyDb: d.onlyDb, onlyFiles: d.onlyFiles }, name).toEqual({ onlyDb: [], onlyFiles: [] });
  }

  beforeAll(async () => {
    const demo = await demoCopy(dir, NOW);
    expect(demo.collectExitCode).toBe(0);
    expect(demo.db).toBe(db);
    first = await exportAt(NOW);
  }, 400_000);

  it('writes Hive partitions with a manifest each', () => {
    expect(first.written.length).toBe(first.partitions);
    expect(first.written).toContain('usage_framework/granularity=hourly/month=2026-11');
    expect(first.written).toContain('spend_daily/month=2026-10');
    const m = JSON.parse(
      readFileSync(join(dataset, 'usage_program/granularity=daily/month=2026-10/_manifest.json'), 'utf8'),
    );
    const store = readFileSync(join(dataset, 'usage_program/granularity=daily/month=2026-10/part-0.parquet'));
    expect(m.sha256).toBe(createHashHex(store));
    expect(m.rows).toBeGreaterThan(0);
    expect(m.run_ids.length).toBeGreaterThan(0);
  });

  it('reads back exactly with DuckDB read_parquet(hive_partitioning = true)', async () => {
    for (const [name, d] of Object.entries(await datasetDiff())) {
      expect(d.rows, name).toBeGreaterThan(0);
      expect({ onlyDb: d.onlyDb, onlyFiles: d.onlyFiles }, name).toEqual({ onlyDb: [], onlyFiles: [] });
    }
  });

  it('stages each priced month with every column and value the spend_daily view gives it, at the granularity it is priced at', async () => {
    const store = await openStore({ path: db });
    try {
      const sql = rawSql(store);
      const months = await sql.query<{ month: string; granularity: string }>(MONTH_GRANULARITIES);
      // The staging prices the month's granularity alone: more than one granularity is exercised.
      expect(new Set(months.map((m) => m.granularity)).size).toBeGreaterThan(1);
      // The view over all time, once (each month read from the view would price every month again).
      await sql.run(VIEW_ROWS);
      for (const { month } of months) {
        await store.dataset.stagePartition({ stream: 'spend_daily', month });
        const [n] = await sql.query<{ n: bigint }>('SELECT count(*) AS n FROM export_partition');
        expect(Number(n!.n), month).toBeGreaterThan(0);
        const onlyView = await sql.query(`${VIEW_MONTH} EXCEPT ALL SELECT * FROM export_partition LIMIT 5`, { month });
        const onlyStaged = await sql.query(`SELECT * FROM export_partition EXCEPT ALL ${VIEW_MONTH} LIMIT 5`, {
          month,
        });
        expect({ onlyView, onlyStaged }, month).toEqual({ onlyView: [], onlyStaged: [] });
      }
    } finally {
      await store.dataset.dropStaged();
      await store.close();
    }
  });

  it("reads back exactly with pyarrow's dataset API", async () => {
    const rows = await dbRows();
    const py = JSON.parse(
      execFileSync(
        venvPython(),
        [
          'test/export/read_dataset.py',
          dataset,
          JSON.stringify(Object.fromEntries(Object.entries(COLUMNS).map(([n, c]) => [n, c.read]))),
        ],
        { maxBuffer: 1 << 30 },
      ).toString(),
    );
    for (const [name, r] of Object.entries(rows)) {
      expect(py[name].rows.length, name).toBe(r.length);
      expect(sortRows(py[name].rows), name).toEqual(r);
    }
    expect(py.usage_program.types.value).toBe('int64');
    expect(py.usage_program.types.timeframe_start).toBe('timestamp[us, tz=UTC]');
    expect(py.spend_daily.types.cost).toBe('decimal128(18, 2)');
  }, 300_000);

  it('re-exporting unchanged data changes no file; after one more collect only changed partitions are rewritten', async () => {
    const before = await fileStates(dataset);
    const again = await exportAt(NOW);
    expect(again.written).toEqual([]);
    expect(again.unchanged).toBe(first.partitions);
    expect(await fileStates(dataset)).toEqual(before);

    const runId = await collectAt(LATER, 'hourly,daily,monthly');
    const next = await exportAt(LATER);
    const after = await fileStates(dataset);
    expect(next.written.length).toBeGreaterThan(0);
    expect(next.written.length).toBeLessThan(next.partitions);
    expect(next.written).toContain('usage_program/granularity=hourly/month=2026-11');
    const changed = [...after.keys()].filter(
      (f) => before.get(f)?.sha !== after.get(f)!.sha || before.get(f)?.mtimeMs !== after.get(f)!.mtimeMs,
    );
    const partitionOf = (f: string) => f.replace(/^_arrow\//, '').replace(/\/[^/]+$/, '');
    expect(new Set(changed.map(partitionOf))).toEqual(new Set(next.written));
    // A rewritten usage partition holds rows of the new run; an untouched one none.
    for (const p of next.written.filter((w) => w.startsWith('usage_'))) {
      expect(JSON.parse(readFileSync(join(dataset, p, '_manifest.json'), 'utf8')).run_ids, p).toContain(runId);
    }
    for (const f of [...after.keys()].filter(
      (k) => k.startsWith('usage_') && k.endsWith('_manifest.json') && !next.written.includes(partitionOf(k)),
    )) {
      expect(JSON.parse(readFileSync(join(dataset, f), 'utf8')).run_ids, f).not.toContain(runId);
    }
    // And the dataset still equals the database.
    await expectDatasetEqualsDb();
  }, 300_000);

  it('a re-export with nothing changed hashes no row and touches no file', async () => {
    const before = await fileStates(dataset);
    const again = await exportAt(LATER);
    expect(again.full).toBe(false);
    expect(again.checked).toBe(0);
    expect(again.files).toEqual([]);
    expect(await fileStates(dataset)).toEqual(before);
  }, 120_000);

  it('after an hourly collect only the files of the windows it replaced are looked at and rewritten', async () => {
    const before = await fileStates(dataset);
    const runId = await collectAt(LATEST, 'hourly');
    // The files the run's replaced windows fall in: hourly usage by UTC day, spend_daily by month, and
    // the dimensions (a run may change the inventory).
    const store = await openStore({ path: db, readOnly: true });
    const windows = await rawSql(store).query<{ source: string; s: string; e: string }>(
      // A failed or not eligible scope replaced nothing: its window is not looked at.
      `SELECT source, CAST(epoch_ms(window_start) AS VARCHAR) AS s, CAST(epoch_ms(window_end) AS VARCHAR) AS e FROM coverage
       WHERE run_id = $run AND status IN ('complete', 'partial')`,
      { run: runId },
    );
    await store.close();
    expect(windows.length).toBeGreaterThan(0);
    const expected = new Set<string>(['programs/part-0', 'frameworks/part-0', 'snapshots/part-0']);
    for (const w of windows) {
      const stream = w.source === 'v2_frameworks' ? 'usage_framework' : 'usage_program';
      for (let t = Math.floor(Number(w.s) / 86_400_000) * 86_400_000; t < Number(w.e); t += 86_400_000) {
        const day = new Date(t).toISOString().slice(0, 10);
        expected.add(`${stream}/granularity=hourly/month=${day.slice(0, 7)}/part-${day}`);
        expected.add(`spend_daily/month=${day.slice(0, 7)}/part-0`);
      }
    }
    const next = await exportAt(LATEST);
    expect(next.full).toBe(false);
    expect(next.checked).toBe(expected.size);
    for (const f of next.files) expect(expected, f).toContain(f);
    const after = await fileStates(dataset);
    const changed = [...after.keys()].filter(
      (f) => before.get(f)?.sha !== after.get(f)!.sha || before.get(f)?.mtimeMs !== after.get(f)!.mtimeMs,
    );
    const unitOfFile = (f: string) => f.replace(/^_arrow\//, '').replace(/\.(parquet|arrow)$/, '');
    for (const f of changed.filter((x) => !x.endsWith('_manifest.json'))) expect(expected, f).toContain(unitOfFile(f));
    expect(changed.some((f) => f.includes('granularity=daily') || f.includes('granularity=monthly'))).toBe(false);
    await expectDatasetEqualsDb();
  }, 300_000);

  it('a run that collects closed months again with the same values prices none of them again', async () => {
    await collectAt(LATEST, 'monthly');
    const current = new Date(LATEST).toISOString().slice(0, 7);
    const next = await exportAt(LATEST);
    // The run wrote closed months' rows again (new run_id, so their usage files are rewritten) ...
    const closed = next.written
      .map((d) => /^usage_program\/granularity=monthly\/month=(\d{4}-\d{2})$/.exec(d)?.[1])
      .filter((m): m is string => m !== undefined && m < current);
    expect(closed.length).toBeGreaterThan(0);
    // ... with the same values: none of those months is priced again, and the dataset equals the database.
    for (const m of closed) expect(next.priced, m).not.toContain(m);
    await expectDatasetEqualsDb();
  }, 300_000);

  it('a dataset written in the earlier layout (hourly a file a month) is rewritten once, without its old files', async () => {
    const month = 'usage_program/granularity=hourly/month=2026-11';
    const day = (await readdir(join(dataset, month))).find((f) => /^part-\d{4}-\d{2}-\d{2}\.parquet$/.test(f))!;
    // The earlier layout: one part-0 per hourly month, recorded under the directory's path.
    copyFileSync(join(dataset, month, day), join(dataset, month, 'part-0.parquet'));
    const store = await openStore({ path: db });
    await rawSql(store).run("UPDATE export_datasets SET layout = 'v1' WHERE dataset_dir = $dir", { dir: dataset });
    await rawSql(store).run(
      "INSERT INTO export_partitions (dataset_dir, partition, fingerprint, n_rows, sha256, exported_at) VALUES ($dir, $p, 'v1:1:x', 1, 'x', now())",
      {
        dir: dataset,
        p: month,
      },
    );
    await store.close();
    const full = await exportAt(LATEST);
    expect(full.full).toBe(true);
    expect(existsSync(join(dataset, month, 'part-0.parquet'))).toBe(false);
    await expectDatasetEqualsDb();
    const again = await exportAt(LATEST);
    expect(again.full).toBe(false);
    expect(again.checked).toBe(0);
  }, 300_000);
});

function createHashHex(b: Buffer): string {
  return createHash('sha256').update(b).digest('hex');
}

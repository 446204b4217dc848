// prune ([store.retention]): removes exactly the hourly rows before the cutoff (never daily or monthly),
// logs and records what it removed, and refuses, removing nothing, what the configured dataset does not
// hold. The dataset keeps the pruned days.
import { mkdtempSync, renameSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { PruneRefusedError, retentionCutoff } from '../../src/app/prune.js';
import { collectCommand } from '../../src/cli/collect.js';
import { exportCommand } from '../../src/cli/export.js';
import { pruneCommand } from '../../src/cli/prune.js';
import { silentLogger } from '../../src/log.js';
import { startSandbox } from '../../src/sandbox/server.js';
import { quoteLiteral } from '../../src/store/sql.js';
import { openStore } from '../../src/store/store.js';
import { rawSql } from '../../src/store/rawSql.js';

const NOW = Date.parse('2026-11-21T10:37:00Z');
// Pruning three days later with 8 days kept: the cutoff falls inside the collected hourly history.
const PRUNE_AT = NOW + 3 * 86_400_000;
const DAYS = 8;
const PRICES = join(process.cwd(), 'config/prices.toml');

// Per table and granularity: bucket rows and an order-independent digest of every column, before and after
// the cutoff.
const DIGEST_SQL = (table: string) => `SELECT granularity, timeframe_start < $cutoff AS before, count(*) AS n,
  CAST(sum(CAST(hash(t) AS HUGEINT)) AS VARCHAR) AS digest FROM ${table} t GROUP BY ALL ORDER BY ALL`;

describe('prune', { timeout: 300_000 }, () => {
  const dir = mkdtempSync(join(tmpdir(), 'usage-prune-'));
  const db = join(dir, 'usage.duckdb');
  const dataset = join(dir, 'dataset');
  const cutoff = retentionCutoff(new Date(PRUNE_AT), DAYS);

  async function digests() {
    const store = await openStore({ path: db, readOnly: true });
    try {
      const out: Record<string, { granularity: string; before: boolean; n: bigint; digest: string }[]> = {};
      for (const t of ['usage_program_buckets', 'usage_framework_buckets'])
        out[t] = await rawSql(store).query(DIGEST_SQL(t), { cutoff });
      return out;
    } finally {
      await store.close();
    }
  }

  beforeAll(async () => {
    const sandbox = await startSandbox({ port: 0, scenario: 'small', now: NOW });
    try {
      const c = await collectCommand({
        db,
        env: { ...process.env, USAGE_API_KEY: sandbox.apiKey },
        baseUrl: sandbox.baseUrl,
        granularity: 'hourly,daily,monthly',
        inventory: 'auto',
        now: () => NOW,
        log: silentLogger,
      });
      expect(c.exitCode).toBe(0);
    } finally {
      await sandbox.close();
    }
  }, 400_000);

  it('without a retention setting removes nothing', { timeout: 120_000 }, async () => {
    const before = await digests();
    const r = await pruneCommand({ db, now: () => PRUNE_AT, log: silentLogger });
    expect(r.cutoff).toBeUndefined();
    expect(await digests()).toEqual(before);
  });

  it('refuses, removing nothing, what the dataset does not hold', async () => {
    const before = await digests();
    expect(before.usage_program_buckets!.some((r) => r.granularity === 'hourly' && r.before)).toBe(true);
    // Not exported yet.
    await expect(
      pruneCommand({ db, hourlyDays: DAYS, dataset, now: () => PRUNE_AT, log: silentLogger }),
    ).rejects.toBeInstanceOf(PruneRefusedError);
    expect(await digests()).toEqual(before);
    // Exported, but one of the days' files is gone from the dataset.
    await exportCommand({ db, dataset, prices: PRICES, now: () => NOW, log: silentLogger });
    const day = cutoff.toISOString().slice(0, 10);
    const prev = new Date(cutoff.getTime() - 86_400_000).toISOString().slice(0, 10);
    const file = join(dataset, `usage_framework/granularity=hourly/month=${prev.slice(0, 7)}/part-${prev}.parquet`);
    renameSync(file, `${file}.away`);
    await expect(
      pruneCommand({ db, hourlyDays: DAYS, dataset, now: () => PRUNE_AT, log: silentLogger }),
    ).rejects.toThrow(/missing/);
    expect(await digests()).toEqual(before);
    renameSync(`${file}.away`, file);
    expect(day > prev).toBe(true);
  }, 400_000);

  it('removes exactly the hourly rows before the cutoff, records them, and the dataset keeps them', async () => {
    const before = await digests();
    const dry = await pruneCommand({
      db,
      hourlyDays: DAYS,
      dataset,
      dryRun: true,
      now: () => PRUNE_AT,
      log: silentLogger,
    });
    expect(await digests()).toEqual(before);
    const r = await pruneCommand({ db, hourlyDays: DAYS, dataset, now: () => PRUNE_AT, log: silentLogger });
    expect(r.cutoff).toBe(cutoff.toISOString());
    expect(r.removed).toEqual(dry.removed);
    const after = await digests();
    for (const t of ['usage_program_buckets', 'usage_framework_buckets']) {
      const pruned = before[t]!.find((x) => x.granularity === 'hourly' && x.before);
      // What it says it removed is exactly what was there before the cutoff.
      expect(r.removed.find((x) => x.table === t)?.rows, t).toBe(Number(pruned?.n ?? 0));
      expect(after[t], t).toEqual(before[t]!.filter((x) => !(x.granularity === 'hourly' && x.before)));
      expect(
        after[t]!.filter((x) => x.granularity !== 'hourly'),
        t,
      ).toEqual(before[t]!.filter((x) => x.granularity !== 'hourly'));
    }
    const store = await openStore({ path: db, readOnly: true });
    try {
      // What status shows (kept with each write, the prune's too) is what the tables hold.
      const [n] = await rawSql(store).query<{ p: bigint; f: bigint }>(
        'SELECT (SELECT count(*) FROM usage_program_buckets) AS p, (SELECT count(*) FROM usage_framework_buckets) AS f',
      );
      expect(await store.usage.rowCounts()).toEqual({ usage_program: Number(n!.p), usage_framework: Number(n!.f) });
      const removals = await rawSql(store).query<{ table_name: string; rows: bigint; run_id: string }>(
        'SELECT table_name, rows, run_id FROM usage_removals ORDER BY table_name',
      );
      const byTable = (a: [string, number, string | undefined][]) => a.sort((x, y) => (x[0] < y[0] ? -1 : 1));
      expect(byTable(removals.map((x) => [x.table_name, Number(x.rows), x.run_id]))).toEqual(
        byTable(r.removed.map((x) => [x.table, x.rows, r.runId])),
      );
      const [cov] = await rawSql(store).query<{ n: bigint }>(
        "SELECT count(*) AS n FROM coverage WHERE granularity = 'hourly' AND window_start < $cutoff",
        { cutoff },
      );
      expect(Number(cov!.n)).toBe(0);
      // The dataset still holds the pruned hours, and a later export keeps them.
      await store.close();
      await exportCommand({ db, dataset, prices: PRICES, now: () => PRUNE_AT, log: silentLogger });
      const again = await openStore({ path: db, readOnly: true });
      const [held] = await rawSql(again).query<{ n: bigint }>(
        `SELECT count(DISTINCT (program_id, period_id, timeframe_start)) AS n FROM read_parquet(${quoteLiteral(join(dataset, 'usage_program/granularity=hourly/*/*.parquet'))}) WHERE timeframe_start < $cutoff`,
        { cutoff },
      );
      await again.close();
      const pruned = before.usage_program_buckets!.find((x) => x.granularity === 'hourly' && x.before)!;
      expect(Number(held!.n)).toBe(Number(pruned.n));
    } finally {
      await store.close().catch(() => {
        // the test's own failure is the one to report
      });
    }
    // Nothing left to prune.
    const next = await pruneCommand({ db, hourlyDays: DAYS, dataset, now: () => PRUNE_AT, log: silentLogger });
    expect(next.removed).toEqual([]);
  }, 400_000);

  it('refuses fewer than 8 days (the API still serves those hours)', async () => {
    await expect(pruneCommand({ db, hourlyDays: 7, now: () => PRUNE_AT, log: silentLogger })).rejects.toThrow(
      /at least 8/,
    );
  });
});

// Shared by the store tests: temporary database files and usage rows.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { UsageBatchSpec } from '../../src/store/types.js';
import { appendRows, type UsageRowIn } from './rowLoader.js';
import { openStore, type Store } from '../../src/store/store.js';
import { afterEach, beforeEach } from 'vitest';
import { rawSql } from '../../src/store/rawSql.js';

export function tempDir(prefix = 'store-test-'): { dir: string; cleanup: () => void } {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

/** A fresh folder per test: returns a getter for the path of a database file in it (not created; the folder is removed after each test). */
export function useTempDbPath(): () => string {
  let path: string | undefined;
  let cleanup: (() => void) | undefined;
  beforeEach(() => {
    const t = tempDir();
    cleanup = t.cleanup;
    path = join(t.dir, 'usage.duckdb');
  });
  afterEach(() => cleanup?.());
  return () => path!;
}

/** A fresh database file per test: returns a getter for the open store (closed and removed after each test). */
export function useTempStore(): () => Store {
  let store: Store | undefined;
  let cleanup: (() => void) | undefined;
  beforeEach(async () => {
    const t = tempDir();
    cleanup = t.cleanup;
    store = await openStore({ path: join(t.dir, 'usage.duckdb') });
  });
  afterEach(async () => {
    await store?.close();
    cleanup?.();
  });
  return () => store!;
}

export const HOUR = 3_600_000;
export const T0 = Date.UTC(2025, 0, 1); // 2025-01-01T00:00Z
export const at = (hours: number): Date => new Date(T0 + hours * HOUR);

/** Hourly rows: for each program, hour in [fromHour, toHour) and metric, value = f(...). */
export function hourlyRows(o: {
  org?: string | null;
  programs: string[];
  fromHour: number;
  toHour: number;
  metrics?: string[];
  value?: (program: string, hour: number, metric: string) => bigint;
  period?: string;
  frameworks?: (program: string) => string[];
}): UsageRowIn[] {
  const metrics = o.metrics ?? ['compute_unit_seconds', 'public_network_transfer_bytes'];
  const value = o.value ?? ((p, h, m) => BigInt(h * 1000 + m.length + p.length));
  const out: UsageRowIn[] = [];
  for (const p of o.programs) {
    for (const fw of o.frameworks ? o.frameworks(p) : [undefined]) {
      for (let h = o.fromHour; h < o.toHour; h++) {
        for (const m of metrics) {
          out.push({
            org_id: o.org === undefined ? 'org-1' : o.org,
            program_id: p,
            ...(fw === undefined ? {} : { framework_id: fw }),
            period_id: o.period ?? `period-${p}`,
            period_plan: 'scale',
            period_start: at(-24 * 10),
            period_end: null,
            timeframe_start: at(h),
            timeframe_end: at(h + 1),
            metric: m,
            value: value(p, h, m),
          });
        }
      }
    }
  }
  return out;
}

export function spec(
  over: Partial<UsageBatchSpec> & Pick<UsageBatchSpec, 'windowStart' | 'windowEnd'>,
): UsageBatchSpec {
  return {
    table: 'usage_program',
    apiVersion: 'v2',
    granularity: 'hourly',
    scope: { orgId: 'org-1' },
    coverage: { source: 'v2_programs', scope: 'org-1', status: 'complete' },
    runId: 'run-1',
    collectedAt: new Date(T0 + 1000 * HOUR),
    ...over,
  };
}

/** Loads rows as one batch and commits it. */
export async function load(store: Store, s: UsageBatchSpec, rows: UsageRowIn[]): Promise<number> {
  const b = store.usage.beginBatch(s);
  await appendRows(b, rows);
  return (await b.commit()).rows;
}

/** The fact table as sorted "granularity|org|program|(version or framework)|period|hour|metric=value" strings, for exact comparisons. */
export async function dump(
  store: Store,
  table: 'usage_program' | 'usage_framework' = 'usage_program',
): Promise<string[]> {
  const fw = table === 'usage_framework' ? "framework_id || '|' ||" : "api_version || '|' ||";
  const rows = await rawSql(store).query<{ k: string }>(
    `SELECT granularity || '|' || coalesce(org_id, '-') || '|' || program_id || '|' || ${fw} period_id || '|' ||
            strftime(timeframe_start, '%Y-%m-%dT%H') || '|' || metric || '=' || value::VARCHAR AS k
     FROM ${table} ORDER BY k`,
  );
  return rows.map((r) => r.k);
}

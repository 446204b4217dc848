// Collection runs (table collection_runs): started, finished with their counts, the latest listed for `status`.
import type { RunStatus } from '../../domain/status.js';
import type { RunRow } from '../types.js';
import { num, type StoreContext } from './context.js';

const SECRET_OPTION = /authorization|api[_-]?key|token|secret|password/i;

function optionsJson(options: unknown): string {
  return JSON.stringify(options ?? null, (k, v: unknown) => {
    if (k && SECRET_OPTION.test(k)) return '[redacted]';
    return typeof v === 'bigint' ? v.toString() : v;
  });
}

// Parameters: $run_id VARCHAR, $finished_at TIMESTAMPTZ, $status VARCHAR, $requests BIGINT, $retries
// BIGINT, $throttled BIGINT, $pages BIGINT, $rows_loaded BIGINT, $error VARCHAR, $inventory_requests
// BIGINT.
const RUN_FINISH_SQL = `
UPDATE collection_runs
SET finished_at = $finished_at, status = $status, requests = $requests, retries = $retries,
    throttled = $throttled, pages = $pages, rows_loaded = $rows_loaded, error = $error,
    inventory_requests = $inventory_requests
WHERE run_id = $run_id;`;

// Parameters: $run_id VARCHAR, $command VARCHAR, $started_at TIMESTAMPTZ, $options VARCHAR (JSON, no
// secrets).
const RUN_START_SQL = `
INSERT INTO collection_runs (run_id, command, started_at, status, options)
VALUES ($run_id, $command, $started_at, 'running', $options);`;

// Parameters: $n INTEGER. The most recent collection runs, newest first.
const RUNS_LAST_SQL = `
SELECT run_id, command, started_at, finished_at, status, requests, retries, throttled, pages,
       rows_loaded, error, options, inventory_requests
FROM collection_runs
ORDER BY started_at DESC, run_id DESC
LIMIT $n;`;

/** How a collection run ended, as runs.finish records it. */
export interface RunFinish {
  runId: string;
  status: Exclude<RunStatus, 'running'>;
  requests: number;
  retries: number;
  throttled: number;
  pages: number;
  rowsLoaded: number;
  inventoryRequests?: number;
  error?: string;
}

/** The collection runs (Store.runs). */
export class Runs {
  /** @internal Created by the Store. */
  constructor(private readonly cx: StoreContext) {}

  /** Records a run as started now, with its options (secrets redacted). */
  async start(r: { runId: string; command: string; options: unknown }): Promise<void> {
    await this.cx.sql.run(RUN_START_SQL, {
      run_id: r.runId,
      command: r.command,
      started_at: this.cx.now(),
      options: optionsJson(r.options),
    });
  }

  /** Records how a started run ended; refuses a run that was never started. */
  async finish(r: RunFinish): Promise<void> {
    const changed = await this.cx.exclusive(() =>
      this.cx.exec(RUN_FINISH_SQL, {
        run_id: r.runId,
        finished_at: this.cx.now(),
        status: r.status,
        requests: BigInt(r.requests),
        retries: BigInt(r.retries),
        throttled: BigInt(r.throttled),
        pages: BigInt(r.pages),
        rows_loaded: BigInt(r.rowsLoaded),
        error: r.error ?? null,
        inventory_requests: BigInt(r.inventoryRequests ?? 0),
      }),
    );
    if (changed !== 1) throw new Error(`runs.finish: no collection run ${r.runId} (runs.start was not called)`);
  }

  /** The latest n runs, newest first. */
  async last(n: number): Promise<RunRow[]> {
    const rows = await this.cx.sql.query(RUNS_LAST_SQL, { n });
    return rows.map((r) => ({
      runId: r.run_id as string,
      command: r.command as string,
      startedAt: r.started_at as Date,
      finishedAt: (r.finished_at as Date | null) ?? null,
      status: r.status as RunStatus,
      requests: num(r.requests),
      retries: num(r.retries),
      throttled: num(r.throttled),
      pages: num(r.pages),
      rowsLoaded: num(r.rows_loaded),
      error: (r.error as string | null) ?? null,
      options: (r.options as string | null) ?? null,
      inventoryRequests: num(r.inventory_requests ?? 0),
    }));
  }
}

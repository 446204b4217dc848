// `npm start`: the demo. Starts the sandbox in-process, collects the `small` scenario at every
// granularity, writes last month's reports, and says where everything is.
import { readSql } from '../store/sql.js';
import type { ReportResult } from '../report/run.js';
import { startSandbox } from '../sandbox/server.js';
import { collectOnce, type CollectOnceResult } from '../app/collect.js';
import { commandContext, type CommonOptions } from '../app/context.js';
import { queryAnalystCopy } from '../app/query.js';
import { writeReport } from '../app/report.js';
import { GRANULARITIES } from '../domain/granularity.js';
import { previousMonth } from '../domain/calendar.js';
import type { CollectProgress } from '../collect/collect.js';
import { cliInvocation, shellArg } from './invocation.js';

export interface DemoResult {
  baseUrl: string;
  dbPath: string;
  analystCopy: string | null;
  collect: CollectOnceResult;
  report: ReportResult;
  month: string;
  query: string;
  queryResult: Record<string, unknown>[];
  /** Commands to try next, each runnable as printed from the working directory. */
  hints: { query: string; status: string; report: string };
}

/** The query the demo runs and shows: the first of the analysts' examples (`query --example NAME`). */
export const DEMO_QUERY_FILE = 'queries/examples/01_compute_hours_last_month.sql';
export const DEMO_QUERY_NAME = 'compute_hours_last_month';

export async function demoCommand(
  opts: CommonOptions & { progress?: CollectProgress; now?: () => number; outDir?: string },
): Promise<DemoResult> {
  const ctx = commandContext(opts);
  const clock = opts.now ?? Date.now;
  const sandbox = await startSandbox({ port: 0, scenario: 'small', now: clock() });
  try {
    const env: NodeJS.ProcessEnv = { ...ctx.env, USAGE_API_KEY: sandbox.apiKey };
    delete env.USAGE_API_KEY_FILE; // the sandbox's key, not the operator's
    const collected = await collectOnce(
      { ...ctx, env },
      {
        baseUrl: sandbox.baseUrl,
        granularities: GRANULARITIES,
        inventory: 'always',
        now: clock,
        ...(opts.progress ? { progress: opts.progress } : {}),
      },
    );
    const month = previousMonth(clock());
    const report = await writeReport(ctx, {
      month,
      ...(opts.outDir !== undefined ? { outDir: opts.outDir } : {}),
      now: new Date(clock()),
    });
    // The example query as the `query` command runs it (on the analyst copy), so the hint shows the same rows.
    const query = readSql(DEMO_QUERY_FILE);
    const queryResult = (await queryAnalystCopy(ctx, query)).rows;
    const cli = cliInvocation(ctx.cwd);
    // --db only when the demo did not use the default database, so the hint finds the same data.
    const db = ctx.dbPath === ctx.config.store.db ? '' : ` --db ${shellArg(ctx.dbPath)}`;
    const hints = {
      query: `${cli} query --example ${DEMO_QUERY_NAME}${db}`,
      status: `${cli} status${db}`,
      report: `${cli} report --month ${month}${db}`,
    };
    return {
      baseUrl: sandbox.baseUrl,
      dbPath: collected.dbPath,
      analystCopy: collected.analystCopy,
      collect: collected,
      report,
      month,
      query: query
        .split('\n')
        .filter((l) => !l.startsWith('--'))
        .join('\n')
        .trim(),
      queryResult,
      hints,
    };
  } finally {
    await sandbox.close();
  }
}

// The test kit's row loader: long rows (one metric value of one bucket, as tests and fixtures build
// them) checked, folded into one bucket row per call and staged into a usage batch through the batch's one
// loading path (StagedUsageBatch.appendRead, which appendPage takes with readPage as its reader): this file
// is the reader of fixture rows, in place of a page's text. The batch then commits them as it commits pages.
import type { UsageBatch } from '../../src/store/types.js';
import { StagedUsageBatch } from '../../src/store/usageBatch.js';
import { UsageBatchError } from '../../src/store/usageBatchErrors.js';
import { V1_METRICS, V2_FRAMEWORK_METRICS, V2_PROGRAM_METRICS } from '../../src/contract/api.js';
import { METRIC_COLUMNS } from '../../src/page/pageRows.js';
import type { PeriodBook } from '../../src/store/periodBook.js';
import type { PageRead, WideChunkWriter } from '../../src/store/wideChunkWriter.js';

const INT64 = { max: 2n ** 63n - 1n, min: -(2n ** 63n) };
const METRIC_INDEX = new Map(METRIC_COLUMNS.map((m, i) => [m, i]));
const FRAMEWORK_METRICS = new Set<string>(V2_FRAMEWORK_METRICS);
const PROGRAM_METRICS = new Set<string>([...V2_PROGRAM_METRICS, ...V1_METRICS]);

/** Whether a metric name has a column in a batch of this kind. */
function metricColumn(name: string, framework: boolean): number | undefined {
  return (framework ? FRAMEWORK_METRICS : PROGRAM_METRICS).has(name) ? METRIC_INDEX.get(name) : undefined;
}

/** One metric value of one bucket, as the API reported it. */
export interface UsageRowIn {
  org_id: string | null;
  program_id: string;
  /** Required for usage_framework batches, ignored (must be absent) for usage_program. */
  framework_id?: string;
  period_id: string;
  period_plan: string;
  period_start: Date;
  period_end: Date | null;
  timeframe_start: Date;
  timeframe_end: Date;
  metric: string;
  /** Exact int64. */
  value: bigint;
}

/** Appends long rows into a batch's staging (one call per page, as the collector's pages are). A call that
 *  fails leaves the batch unusable (rows already written cannot be taken back), so it is aborted. */
export async function appendRows(batch: UsageBatch, rows: Iterable<UsageRowIn>): Promise<void> {
  if (!(batch instanceof StagedUsageBatch)) throw new TypeError('appendRows takes a batch from Store.usage.beginBatch');
  const framework = batch.spec.table === 'usage_framework';
  const source = framework ? 'v2_frameworks' : batch.spec.apiVersion === 'v1' ? 'v1_programs' : 'v2_programs';
  const read = (writer: WideChunkWriter, book: PeriodBook): PageRead => {
    let n = 0;
    // The long rows of one call are folded into one row per bucket (a bucket's metrics belong in one call).
    const width = framework ? 6 : METRIC_COLUMNS.length;
    const buckets = new Map<string, { r: UsageRowIn; period: number; metrics: (bigint | null)[] }>();
    const programIds = new Set<string>();
    for (const r of rows) {
      checkRow(r, framework);
      const col = metricColumn(r.metric, framework)!;
      const period = book.period(
        r.period_id,
        r.period_plan,
        book.fromDate(r.period_start),
        r.period_end === null ? null : book.fromDate(r.period_end),
      );
      const key = `${r.program_id}\u0000${r.framework_id ?? ''}\u0000${period}\u0000${r.timeframe_start.getTime()}\u0000${r.org_id ?? ''}`;
      let b = buckets.get(key);
      if (b === undefined) {
        b = { r, period, metrics: new Array<bigint | null>(width).fill(null) };
        buckets.set(key, b);
      }
      if (b.metrics[col] !== null) {
        throw new UsageBatchError(
          `${batch.spec.table} batch refused, nothing was written: the key program_id=${r.program_id}${r.framework_id ? ` framework_id=${r.framework_id}` : ''} ` +
            `period_id=${r.period_id} timeframe_start=${r.timeframe_start.toISOString()} metric=${r.metric} appears more than once`,
        );
      }
      b.metrics[col] = r.value;
      programIds.add(r.program_id);
      n++;
    }
    for (const { r, period, metrics } of buckets.values()) {
      writer.add(
        r.org_id ?? null,
        r.program_id,
        r.framework_id ?? null,
        period,
        book.fromDate(r.timeframe_start),
        book.fromDate(r.timeframe_end),
        metrics,
      );
    }
    return { items: programIds.size, cursor: null, programIds: [...programIds], rowlessIds: [], values: n };
  };
  try {
    await batch.appendRead(source, read);
  } catch (err) {
    await batch.abort();
    throw err;
  }
}

const REQUIRED = [
  'program_id',
  'period_id',
  'period_plan',
  'period_start',
  'timeframe_start',
  'timeframe_end',
  'metric',
] as const;

/** A long row as the store takes it: every key column present, the value an int64 bigint, a known metric. */
function checkRow(r: UsageRowIn, framework: boolean): void {
  if (typeof r.value !== 'bigint' || r.value > INT64.max || r.value < INT64.min) {
    throw new TypeError(
      `usage value must be an int64 bigint, got ${typeof r.value} ${String(r.value)} for ${r.program_id} ${r.metric} ${r.timeframe_start?.toISOString?.()}`,
    );
  }
  for (const k of REQUIRED) {
    if (r[k] === null || r[k] === undefined)
      throw new TypeError(`usage row without ${k}: every row needs ${REQUIRED.join(', ')}`);
  }
  if (framework && !r.framework_id)
    throw new UsageBatchError(
      `usage_framework batch refused, nothing was written: a row of ${r.program_id} has no framework_id`,
    );
  if (metricColumn(r.metric, framework) === undefined) {
    throw new TypeError(
      `usage metric ${r.metric} is not one the ${framework ? 'usage_framework' : 'usage_program'} table has a column for`,
    );
  }
}

// The FinOps FOCUS 1.2 export: a month's spend as FOCUS cost-and-usage rows (src/store/report/sql/focus.sql),
// and its finalisation. Once a month is finalised (`report --finalize`), its rows are recorded in the
// database; a later export writes those rows unchanged and adds ChargeClass 'Correction' rows for
// any difference (src/store/report/sql/focus_corrected.sql), never a silent rewrite.
import { createHash } from 'node:crypto';
import type { Granularity } from '../domain/granularity.js';
import type { PriceBook } from '../billing/pricebook.js';
import type { Store } from '../store/store.js';
import { FOCUS_CURRENT_TABLE, FOCUS_TABLE, focusRowsSql } from '../store/report/focus.js';
import type { ReportPeriod } from './period.js';
import { ParquetStage } from '../store/report/stages.js';
import { ReportInputError } from './period.js';

export const FOCUS_VERSION = '1.2';

/** Who provides, publishes and invoices the service: the FOCUS identity columns. */
export interface FocusIdentity {
  providerName: string;
  publisherName: string;
  invoiceIssuerName: string;
  serviceName: string;
  /** One of FOCUS's allowed ServiceCategory values. */
  serviceCategory: string;
  /** One of FOCUS's allowed ServiceSubcategory values, whose parent is serviceCategory. */
  serviceSubcategory: string;
  /** BillingAccountId (and name) when usage names no organization (legacy personal accounts). */
  unknownBillingAccount: string;
}

export const DEFAULT_FOCUS_IDENTITY: FocusIdentity = {
  providerName: 'Compliance Evidence Management',
  publisherName: 'Compliance Evidence Management',
  invoiceIssuerName: 'Compliance Evidence Management',
  serviceName: 'Compliance Evidence Management',
  // FOCUS 1.2 ServiceSubcategory "Compliance: adherence to regulatory standards" under its parent.
  serviceCategory: 'Management and Governance',
  serviceSubcategory: 'Compliance',
  unknownBillingAccount: 'unknown-organization',
};

export { FOCUS_CURRENT_TABLE, FOCUS_TABLE };

/** RegionName of the region ids the API uses (its public region list); another id is its own name. */
export const REGION_NAMES: Record<string, string> = {
  'aws-us-east-1': 'AWS US East (N. Virginia)',
  'aws-us-east-2': 'AWS US East (Ohio)',
  'aws-us-west-2': 'AWS US West (Oregon)',
  'aws-eu-central-1': 'AWS Europe (Frankfurt)',
  'aws-eu-west-2': 'AWS Europe (London)',
  'aws-ap-southeast-1': 'AWS Asia Pacific (Singapore)',
  'aws-ap-southeast-2': 'AWS Asia Pacific (Sydney)',
  'aws-sa-east-1': 'AWS South America (Sao Paulo)',
  'azure-eastus2': 'Azure East US 2',
  'azure-westus3': 'Azure West US 3',
  'azure-gwc': 'Azure Germany West Central',
};

const DATA_SIZE = /^(b|B|Kb|KB|Mb|MB|Gb|GB|Tb|TB|Pb|PB|Eb|EB|Kib|KiB|Mib|MiB|Gib|GiB|Tib|TiB|Pib|PiB|Eib|EiB)$/;
const TIME_UNITS: Record<string, string> = {
  year: 'Year',
  month: 'Month',
  day: 'Day',
  hour: 'Hour',
  minute: 'Minute',
  second: 'Second',
  millisecond: 'Millisecond',
  microsecond: 'Microsecond',
};

/**
 * A billing unit of the catalogue ('GB-month', 'CU-hour', 'hour', 'branch-month') written as FOCUS's
 * UnitFormat wants it: data sizes as their abbreviations (GB = 10^9 bytes), other base units
 * capitalised, the last base unit plural: 'GB-Months', 'CU-Hours', 'Hours', 'Branch-Months', 'GB'.
 */
export function focusUnit(billingUnit: string): string {
  const parts = billingUnit
    .split('-')
    .map((p) => p.trim())
    .filter(Boolean);
  return parts
    .map((p, i) => {
      if (DATA_SIZE.test(p)) return p;
      const base =
        TIME_UNITS[p.toLowerCase()] ?? (/^[A-Z0-9]+$/.test(p) ? p : p[0]!.toUpperCase() + p.slice(1).toLowerCase());
      if (i < parts.length - 1 || /^[A-Z0-9]+$/.test(base)) return base;
      return base.endsWith('s') ? base : `${base}s`;
    })
    .join('-');
}

export interface FocusFinalization {
  finalizationId: string;
  seq: number;
  finalizedAt: string;
  rows: number;
  billedTotal: string;
  rowsSha256: string;
}

/** Why unpriced usage is not in the FOCUS file (the manifest, the report's output and the About sheet say it). */
export const FOCUS_LEFT_OUT_WHY =
  'FOCUS cost columns must not be null and no price is invented: usage without a rate is left out of the FOCUS file ' +
  'and stays in the workbook and the Parquet reports as UNPRICED';

/** What FOCUS's cost columns are here (column x_CostBasis of the file, and the manifest). */
export const focusCostBasis = (revision: string): string =>
  `estimate from price book revision ${revision}, not an invoice`;

export interface FocusLeftOut {
  /** program_spend lines without a rate, not in the FOCUS file. */
  lines: number;
  /** Their plans, sorted. */
  plans: string[];
  /** By plan and reason. */
  byPlan: { plan: string; reason: string; lines: number }[];
}

/** One line on what was left out of the FOCUS file and why (the About sheet, the report's output). */
export function focusLeftOutLine(b: Pick<FocusBuild, 'leftOut'>): string {
  if (b.leftOut.lines === 0) return 'nothing: every line has a rate';
  return `${b.leftOut.lines} unpriced line(s) of plan(s) ${b.leftOut.plans.join(', ')}: ${FOCUS_LEFT_OUT_WHY}`;
}

export interface FocusBuild {
  table: typeof FOCUS_TABLE;
  rows: number;
  /** Unpriced usage left out of the file (FOCUS_LEFT_OUT_WHY). */
  leftOut: FocusLeftOut;
  /** focusCostBasis of the price book's revision. */
  costBasis: string;
  /** Rows with ChargeClass 'Correction' written after the finalised rows. */
  corrections: number;
  /** Sum of BilledCost over the rows written. */
  billedTotal: string;
  /** The month's finalisations before this run. */
  finalizations: FocusFinalization[];
  /** Recorded by this run (finalize). */
  finalized: FocusFinalization | null;
  /**
   * What a finalisation of this build would record: the rows after line `after`, up to line `last`
   * (their digest is computed only when a finalisation records them: pendingDigest).
   */
  pending: { month: string | null; after: number; rows: number; last: number };
}

/** finalize was asked for a period that cannot be finalised; nothing was recorded. */
export class FocusFinalizeError extends ReportInputError {
  constructor(message: string) {
    super(message);
    this.name = 'FocusFinalizeError';
  }
}

/** Checks before anything is written that `finalize` may record this period. */
export function assertFinalizable(period: ReportPeriod, partial: boolean, now: Date): void {
  if (period.month === null)
    throw new FocusFinalizeError('only a calendar month can be finalised: use --month YYYY-MM with --finalize');
  if (now.getTime() < period.rangeEnd.getTime())
    throw new FocusFinalizeError(
      `${period.month} has not ended yet (it ends ${period.rangeEnd.toISOString()}); finalise it after its end`,
    );
  if (partial)
    throw new FocusFinalizeError(
      `${period.month} is not completely collected; finalising it would fix a PARTIAL export. Collect the month first`,
    );
}

/**
 * Programs whose FOCUS rows are built by one query: a whole chunk of the detail (100 programs of wide
 * rows) sorted at once took the process far above its memory limit; 25 at a time sort a quarter of it.
 */
const FOCUS_PROGRAMS_PER_PART = 25;

/** Lines per hashed block (FOCUS_DIGEST_SQL of store/report/focus.ts). */
const DIGEST_BLOCK = 10_000;

/**
 * sha256 of the FOCUS rows after line `after`: each block of DIGEST_BLOCK lines (line_no div
 * DIGEST_BLOCK) hashed in line order by one query, then the block hashes joined by newlines, in
 * order. One block at a time, so memory is bounded by a block, whatever the number of rows.
 */
async function digestRows(store: Store, after: number, last: number): Promise<{ rows: number; digest: string }> {
  const hashes: string[] = [];
  let rows = 0;
  for (let block = Math.floor((after + 1) / DIGEST_BLOCK); block * DIGEST_BLOCK <= last; block++) {
    const lo = Math.max(after, block * DIGEST_BLOCK - 1);
    const hi = block * DIGEST_BLOCK + DIGEST_BLOCK - 1;
    const b = await store.report.focus.focusDigestBlock(lo, hi);
    if (Number(b.n) === 0) continue;
    rows += Number(b.n);
    hashes.push(b.h);
  }
  return { rows, digest: createHash('sha256').update(hashes.join('\n')).digest('hex') };
}

/**
 * The rows a finalisation of `build` records and their sha256 (digestRows): only computed when a
 * month is finalised, since at 10,000 programs (about 14 million rows) it reads every row again.
 */
export async function pendingDigest(store: Store, build: FocusBuild): Promise<{ rows: number; digest: string }> {
  return digestRows(store, build.pending.after, build.pending.last);
}

/** The FOCUS query's parameters: the price book's currency and units, the provider's identity, the coverage. */
function focusParams(o: {
  granularity: Granularity;
  book: PriceBook;
  coverageStatus: 'COMPLETE' | 'PARTIAL';
  identity?: Partial<FocusIdentity>;
}) {
  const id = { ...DEFAULT_FOCUS_IDENTITY, ...o.identity };
  const units = [...new Set([...o.book.metrics.values()].map((m) => m.billingUnit))].sort();
  return {
    granularity: o.granularity,
    currency: o.book.currency,
    revision: o.book.revision,
    provider: id.providerName,
    publisher: id.publisherName,
    invoice_issuer: id.invoiceIssuerName,
    service_name: id.serviceName,
    service_category: id.serviceCategory,
    service_subcategory: id.serviceSubcategory,
    unknown_account: id.unknownBillingAccount,
    unit_from: units,
    unit_to: units.map(focusUnit),
    region_ids: Object.keys(REGION_NAMES),
    region_names: Object.values(REGION_NAMES),
    coverage_status: o.coverageStatus,
  };
}

/** The month's recorded FOCUS finalisations, in order. */
async function focusFinalizations(store: Store, month: string): Promise<FocusFinalization[]> {
  return (await store.report.focus.focusFinalizations(month)).map((f): FocusFinalization => ({
    finalizationId: f.finalization_id,
    seq: Number(f.seq),
    finalizedAt: f.finalized_at.toISOString(),
    rows: Number(f.n_rows),
    billedTotal: f.billed_total,
    rowsSha256: f.rows_sha256,
  }));
}

/**
 * Computes the period's FOCUS rows into FOCUS_TABLE (requires rpt_daily of the same run): the
 * current rows, or for a finalised month the finalised rows plus corrections.
 */
export async function buildFocus(
  store: Store,
  o: {
    period: ReportPeriod;
    granularity: Granularity;
    book: PriceBook;
    /** 'COMPLETE' or 'PARTIAL', written to x_CoverageStatus. */
    coverageStatus: 'COMPLETE' | 'PARTIAL';
    identity?: Partial<FocusIdentity>;
    /** The run's detail (rpt_daily) as Parquet parts, one per chunk of programs (store/report/stages.ts). */
    daily: ParquetStage;
    /** The run's scratch folder, for the FOCUS rows' parts. */
    scratchDir: string;
  },
): Promise<FocusBuild> {
  const params = focusParams(o);

  // One group of FOCUS_PROGRAMS_PER_PART programs of a chunk of the detail at a time into Parquet parts
  // (store/report/stages.ts), numbered on from the groups before: no copy of all the rows is ever
  // held, and no window or sort runs over more than one group's wide rows.
  const focusSql = focusRowsSql();
  const current = await store.report.stages.chunkwise(
    o.daily,
    FOCUS_CURRENT_TABLE,
    o.scratchDir,
    focusSql,
    params,
    false,
    FOCUS_PROGRAMS_PER_PART,
  );

  const month = o.period.month;
  const finalizations = month === null ? [] : await focusFinalizations(store, month);

  if (finalizations.length === 0) {
    // The rows written are the current rows: the FOCUS table is a view over the same parts.
    await current.publish(focusSql, { ...params, line_offset: 0n }, FOCUS_TABLE);
  } else {
    // A finalised month: its recorded rows, then the corrections against the current rows.
    await current.publish(focusSql, { ...params, line_offset: 0n });
    await store.report.focus.replaceFocusWithCorrected(month!);
  }
  await store.report.stages.dropTempRelation(FOCUS_CURRENT_TABLE);

  const finalizedRows = finalizations.reduce((a, f) => a + f.rows, 0);
  const all = await store.report.focus.focusTotals();
  const byPlan = await store.report.focus.focusUnpriced();
  const last = Number(all.last ?? 0n);

  return {
    table: FOCUS_TABLE,
    rows: Number(all.n_rows),
    leftOut: {
      lines: byPlan.reduce((a, p) => a + p.lines, 0),
      plans: [...new Set(byPlan.map((p) => p.plan))].sort(),
      byPlan,
    },
    costBasis: focusCostBasis(o.book.revision),
    corrections: finalizations.length > 0 ? Number(all.n_rows) - finalizedRows : 0,
    billedTotal: all.billed,
    finalizations,
    finalized: null,
    pending: { month, after: finalizedRows, rows: Number(all.n_rows) - finalizedRows, last },
  };
}

/**
 * Records the rows built by buildFocus as finalised: all of them the first time, the correction rows
 * on a later finalisation; nothing when there is nothing new. Call after the files are written.
 */
export async function recordFinalization(
  store: Store,
  build: FocusBuild,
  o: { book: PriceBook; now: Date },
): Promise<FocusFinalization | null> {
  const { month, after } = build.pending;
  if (month === null) throw new FocusFinalizeError('only a calendar month can be finalised');
  if (build.pending.rows === 0) return null;
  const { rows, digest } = await pendingDigest(store, build);
  const seq = (build.finalizations.at(-1)?.seq ?? 0) + 1;
  const finalizationId = `${month}#${seq}`;
  if (build.table !== FOCUS_TABLE)
    throw new Error(`recordFinalization: the FOCUS rows are in ${FOCUS_TABLE}, not ${build.table}`);
  await store.report.focus.recordFocusFinalization({
    finalizationId,
    month,
    seq,
    finalizedAt: o.now,
    revision: o.book.revision,
    rows,
    billedTotal: build.billedTotal,
    rowsSha256: digest,
    after,
  });
  const f: FocusFinalization = {
    finalizationId,
    seq,
    finalizedAt: o.now.toISOString(),
    rows,
    billedTotal: build.billedTotal,
    rowsSha256: digest,
  };
  build.finalized = f;
  return f;
}

// The alerts' side of the store (migrations 012 and 015): the rules' inputs, priced by day from the
// stored usage and prices (alert_priced_days), the alerts fired (each once), their acknowledgements,
// their webhook deliveries and the organizations' spending limits.
import { MARK_FILL_DAYS_DIRTY_SQL, MARK_TABLE_DIRTY_SQL } from './analystParts.js';
import type { StoreContext } from './facade/context.js';
import { readSql } from './sql.js';

/** One alert as stored; money as decimal strings with 2 decimals, days as YYYY-MM-DD. */
export interface AlertRecord {
  alert_id: string;
  identity: string;
  kind: 'budget_actual' | 'budget_forecast' | 'anomaly' | 'new_spend';
  rule: string;
  rule_version: number;
  month: string;
  scope_kind: 'organization' | 'program' | 'programs';
  scope_id: string;
  threshold_pct: number | null;
  day: string | null;
  org_id: string | null;
  org_name: string | null;
  program_id: string | null;
  program_name: string | null;
  budget_usd: string | null;
  threshold_usd: string | null;
  expected_usd: string | null;
  actual_usd: string | null;
  impact_usd: string | null;
  impact_pct: string | null;
  score: number | null;
  crossing_date: string | null;
  compute_usd: string | null;
  storage_usd: string | null;
  instant_restore_usd: string | null;
  snapshots_usd: string | null;
  transfer_usd: string | null;
  extra_branches_usd: string | null;
  other_usd: string | null;
  message: string;
  detail: string;
  status: 'open' | 'superseded';
  fired_at: Date;
  superseded_at: Date | null;
  superseded_reason: string | null;
  /** From alert_acks, when listed: who acknowledged it, when, and why (absent on a record being fired). */
  acknowledged_at?: Date | null;
  acknowledged_by?: string | null;
  ack_note?: string | null;
}

export const ALERT_COLUMNS = [
  'alert_id',
  'identity',
  'kind',
  'rule',
  'rule_version',
  'month',
  'scope_kind',
  'scope_id',
  'threshold_pct',
  'day',
  'org_id',
  'org_name',
  'program_id',
  'program_name',
  'budget_usd',
  'threshold_usd',
  'expected_usd',
  'actual_usd',
  'impact_usd',
  'impact_pct',
  'score',
  'crossing_date',
  'compute_usd',
  'storage_usd',
  'instant_restore_usd',
  'snapshots_usd',
  'transfer_usd',
  'extra_branches_usd',
  'other_usd',
  'message',
  'detail',
  'status',
  'fired_at',
  'superseded_at',
  'superseded_reason',
] as const satisfies readonly (keyof AlertRecord)[];

// Parameters: $json VARCHAR (a JSON array of AlertRecord). Inserts the alerts not fired before.
const ALERTS_INSERT_SQL = `
INSERT INTO alerts BY NAME
SELECT j.* FROM (SELECT unnest(from_json($json, '${'[' + '{' + ALERT_COLUMNS.map((c) => `"${c}":"VARCHAR"`).join(',') + '}]'}'), recursive := true)) j
WHERE j.identity NOT IN (SELECT identity FROM alerts)`;

// Parameters: $ids VARCHAR[]. Which of these alerts exist already.
const ALERTS_EXISTING_SQL = 'SELECT identity FROM alerts WHERE list_contains($ids, identity)';

// Parameters: $kinds VARCHAR[], $from VARCHAR, $to VARCHAR (YYYY-MM-DD, exclusive). Open alerts of these
// kinds about days in [from, to) (anomalies) or months starting there (budgets).
const ALERTS_OPEN_IN_SQL = `
SELECT identity, kind, CAST(month AS VARCHAR) AS month, CAST(day AS VARCHAR) AS day FROM alerts
WHERE status = 'open' AND list_contains($kinds, kind)
  AND coalesce(CASE WHEN kind IN ('anomaly', 'new_spend') THEN day END, month) >= CAST($from AS DATE)
  AND coalesce(CASE WHEN kind IN ('anomaly', 'new_spend') THEN day END, month) < CAST($to AS DATE)`;

// Parameters: $ids VARCHAR[], $at TIMESTAMPTZ, $reason VARCHAR.
const ALERTS_SUPERSEDE_SQL = `
UPDATE alerts SET status = 'superseded', superseded_at = $at, superseded_reason = $reason
WHERE status = 'open' AND list_contains($ids, identity)`;

// Parameters: $month VARCHAR (YYYY-MM-01, or '' for every month). With each alert's acknowledgement.
const ALERTS_LIST_SQL = `
SELECT a.* REPLACE (CAST(month AS VARCHAR) AS month, CAST(day AS VARCHAR) AS day, CAST(crossing_date AS VARCHAR) AS crossing_date,
  CAST(budget_usd AS VARCHAR) AS budget_usd, CAST(threshold_usd AS VARCHAR) AS threshold_usd,
  CAST(expected_usd AS VARCHAR) AS expected_usd, CAST(actual_usd AS VARCHAR) AS actual_usd,
  CAST(impact_usd AS VARCHAR) AS impact_usd, CAST(impact_pct AS VARCHAR) AS impact_pct,
  CAST(compute_usd AS VARCHAR) AS compute_usd, CAST(storage_usd AS VARCHAR) AS storage_usd,
  CAST(instant_restore_usd AS VARCHAR) AS instant_restore_usd, CAST(snapshots_usd AS VARCHAR) AS snapshots_usd,
  CAST(transfer_usd AS VARCHAR) AS transfer_usd, CAST(extra_branches_usd AS VARCHAR) AS extra_branches_usd,
  CAST(other_usd AS VARCHAR) AS other_usd),
  k.acknowledged_at, k.acknowledged_by, k.note AS ack_note
FROM alerts a LEFT JOIN alert_acks k ON k.alert_id = a.alert_id
WHERE $month = '' OR a.month = CAST(nullif($month, '') AS DATE)
ORDER BY a.month, coalesce(a.day, a.crossing_date, a.month), a.kind, a.scope_id, a.threshold_pct, a.program_id`;

// Parameters: $alert_id, $at TIMESTAMPTZ, $by, $note. An acknowledgement is recorded once; a second keeps the first.
const ALERT_ACK_SQL = `
INSERT OR IGNORE INTO alert_acks SELECT alert_id, $at, $by, $note FROM alerts WHERE alert_id = $alert_id`;

// Parameters: none. Open alerts with no successful delivery, oldest first.
const ALERTS_UNDELIVERED_SQL = `
SELECT a.alert_id, coalesce(max(d.attempt), 0) AS attempts FROM alerts a
LEFT JOIN alert_deliveries d ON d.alert_id = a.alert_id
WHERE a.status = 'open'
GROUP BY a.alert_id, a.fired_at
HAVING count(*) FILTER (WHERE d.outcome = 'delivered') = 0
ORDER BY a.fired_at, a.alert_id`;

// Parameters: $alert_id, $attempt, $attempted_at, $target, $http_status, $outcome, $error.
const DELIVERY_RECORD_SQL = `
INSERT INTO alert_deliveries VALUES ($alert_id, $attempt, $attempted_at, $target, $http_status, $outcome, $error)`;

// Parameters: $alert_id. 1 when the alert was delivered.
const DELIVERED_SQL =
  "SELECT count(*)::INTEGER AS n FROM alert_deliveries WHERE alert_id = $alert_id AND outcome = 'delivered'";

// Parameters: $org_id, $limit_cents BIGINT (NULL: none), $answer VARCHAR, $read_at TIMESTAMPTZ.
const SPENDING_LIMIT_RECORD_SQL =
  'INSERT OR REPLACE INTO org_spending_limits VALUES ($org_id, $limit_cents, $answer, $read_at)';
const SPENDING_LIMITS_SQL = 'SELECT org_id, limit_cents, answer FROM org_spending_limits ORDER BY org_id';

// Parameters: none. The stored daily data: its first day and where complete daily coverage ends.
// (A bucket row is stored only with some metric reported, so the table's first day is the data's.)
const DAILY_BOUNDS_SQL = `
SELECT (SELECT CAST(CAST(timezone('UTC', min(timeframe_start)) AS DATE) AS VARCHAR) FROM usage_program_buckets WHERE granularity = 'daily') AS first_day,
  (SELECT max(window_end) FROM coverage WHERE granularity = 'daily' AND status IN ('complete', 'partial')) AS covered_to`;

// Parameters: $from, $to VARCHAR (YYYY-MM-DD, exclusive). Programs with priced daily usage in the range.
const DAILY_PROGRAMS_SQL = `
SELECT count(DISTINCT program_id)::INTEGER AS n FROM alert_program_days
WHERE usage_day >= CAST($from AS DATE) AND usage_day < CAST($to AS DATE)`;

// Parameters: none. What the priced days are priced with: the pricing columns of the catalogue, the
// rates and the allowances (which lines alert_program_days.plain_cents holds).
const PRICED_DIGEST_SQL = `
SELECT sha256((SELECT coalesce(string_agg(concat_ws('|', metric, divisor, aggregation), ';' ORDER BY metric), '') FROM price_metrics)
  || '/' || (SELECT coalesce(string_agg(concat_ws('|', rate_id, plan, metric, rate_micro, effective_from, coalesce(CAST(effective_to AS VARCHAR), '')), ';' ORDER BY rate_id), '') FROM price_rates)
  || '/' || (SELECT coalesce(string_agg(concat_ws('|', allowance_id, plan, metric, included_raw, scope, effective_from, coalesce(CAST(effective_to AS VARCHAR), '')), ';'
                    ORDER BY allowance_id, plan, metric), '') FROM price_allowances)) AS digest`;
const PRICED_STATE_SQL = 'SELECT prices_digest AS digest FROM alert_priced_state WHERE k = 1';
// Parameters: $digest VARCHAR, $at TIMESTAMPTZ.
const PRICED_STATE_SET_SQL = 'INSERT OR REPLACE INTO alert_priced_state VALUES (1, $digest, $at)';
const PRICED_CLEAR_SQL = 'DELETE FROM alert_priced_days';
const PROGRAM_DAYS_CLEAR_SQL = 'DELETE FROM alert_program_days';
const PRICED_RUNS_CLEAR_SQL = 'DELETE FROM alert_priced_runs';
// Parameters: none. The daily buckets' days: [first, last + 1).
const DAILY_RANGE_SQL = `
SELECT CAST(CAST(timezone('UTC', min(timeframe_start)) AS DATE) AS VARCHAR) AS "from",
  CAST(CAST(timezone('UTC', max(timeframe_start)) AS DATE) + 1 AS VARCHAR) AS "to"
FROM usage_program_buckets WHERE granularity = 'daily'`;
// Parameters: none. The program usage windows of runs not taken in yet: the whole UTC days each replaced,
// its API version and organization (collect replaces a window organization by organization), and when
// its rows were written (coverage.collected_at is the batch's, as usage_program_buckets.collected_at).
// A failed or not eligible scope replaced nothing, but its run is taken in all the same.
const PRICED_FRESH_SQL = `
SELECT run_id, status IN ('complete', 'partial') AS replaced,
  CASE source WHEN 'v1_programs' THEN 'v1' ELSE 'v2' END AS api_version, scope AS org_key, collected_at,
  CAST(CAST(timezone('UTC', window_start) AS DATE) AS VARCHAR) AS "from",
  CAST(CAST(timezone('UTC', window_end - INTERVAL 1 MICROSECOND) AS DATE) + 1 AS VARCHAR) AS "to"
FROM coverage
WHERE granularity = 'daily' AND source <> 'v2_frameworks' AND window_end > window_start
  AND run_id NOT IN (SELECT run_id FROM alert_priced_runs)
ORDER BY 6`;

// A fill works on two TEMP tables: alert_fill_keys (API version, organization, day: what is replaced) and
// alert_fill_buckets (the daily bucket rows priced for them). $from, $to: VARCHAR (YYYY-MM-DD, exclusive).
// Parameters: $api_versions, $orgs, $days VARCHAR[] (one key per position).
const FILL_KEYS_LISTED_SQL = `
CREATE OR REPLACE TEMP TABLE alert_fill_keys AS
SELECT DISTINCT api_version, org_key, CAST(usage_day AS DATE) AS usage_day
FROM (SELECT unnest($api_versions) AS api_version, unnest($orgs) AS org_key, unnest($days) AS usage_day)`;
// Parameters: $since TIMESTAMPTZ (the earliest the replacing runs wrote), $from, $to. The rows of the keys:
// all written by the runs that replaced them, so the filter on collected_at skips every older block.
const FILL_BUCKETS_OF_KEYS_SQL = `
CREATE OR REPLACE TEMP TABLE alert_fill_buckets AS
SELECT b.* FROM usage_program_buckets b
SEMI JOIN alert_fill_keys k ON k.api_version = b.api_version AND k.org_key = coalesce(b.org_id, '')
  AND k.usage_day = CAST(timezone('UTC', b.timeframe_start) AS DATE)
WHERE b.granularity = 'daily' AND b.collected_at >= $since
  AND b.timeframe_start >= CAST(CAST($from AS DATE) AS TIMESTAMP) AT TIME ZONE 'UTC'
  AND b.timeframe_start < CAST(CAST($to AS DATE) AS TIMESTAMP) AT TIME ZONE 'UTC'`;
// Parameters: $from, $to. Every stored day of the range (a full pricing, on empty tables).
const FILL_BUCKETS_OF_DAYS_SQL = `
CREATE OR REPLACE TEMP TABLE alert_fill_buckets AS
SELECT * FROM usage_program_buckets
WHERE granularity = 'daily' AND timeframe_start >= CAST(CAST($from AS DATE) AS TIMESTAMP) AT TIME ZONE 'UTC'
  AND timeframe_start < CAST(CAST($to AS DATE) AS TIMESTAMP) AT TIME ZONE 'UTC'`;
const FILL_KEYS_OF_BUCKETS_SQL = `
CREATE OR REPLACE TEMP TABLE alert_fill_keys AS
SELECT DISTINCT api_version, coalesce(org_id, '') AS org_key, CAST(timezone('UTC', timeframe_start) AS DATE) AS usage_day
FROM alert_fill_buckets`;
// Parameters: $from, $to.
const PRICED_DELETE_KEYS_SQL = `
DELETE FROM alert_priced_days p USING alert_fill_keys k
WHERE p.api_version = k.api_version AND coalesce(p.org_id, '') = k.org_key AND p.usage_day = k.usage_day
  AND p.usage_day >= CAST($from AS DATE) AND p.usage_day < CAST($to AS DATE)`;
// Parameters: $from, $to.
const PROGRAM_DAYS_DELETE_KEYS_SQL = `
DELETE FROM alert_program_days p USING (SELECT DISTINCT org_key, usage_day FROM alert_fill_keys) k
WHERE coalesce(p.org_id, '') = k.org_key AND p.usage_day = k.usage_day
  AND p.usage_day >= CAST($from AS DATE) AND p.usage_day < CAST($to AS DATE)`;
const FILL_BUCKET_COUNT_SQL = 'SELECT count(*)::INTEGER AS n FROM alert_fill_buckets';
const FILL_DROP_SQL = ['DROP TABLE IF EXISTS alert_fill_buckets', 'DROP TABLE IF EXISTS alert_fill_keys'];
// Parameters: $ids VARCHAR[].
const PRICED_RUNS_ADD_SQL = 'INSERT OR IGNORE INTO alert_priced_runs SELECT unnest($ids)';

// Parameters: $ids VARCHAR[]. Names of programs and organizations (NULL when the inventory has none).
const PROGRAM_NAMES_SQL = 'SELECT program_id AS id, name, org_id FROM programs WHERE list_contains($ids, program_id)';
const ORG_NAMES_SQL = 'SELECT org_id AS id, name FROM organizations';
const ORGS_KNOWN_SQL = 'SELECT org_id FROM organizations ORDER BY org_id';

// Parameters: $month VARCHAR (YYYY-MM-01). The metrics whose lines alert_budget_days.sql reads one by one:
// billed on a peak, or with an included allowance in the month (a list given to it, so its scan skips the rest).
const BUDGET_LINE_METRICS_SQL = `
SELECT metric FROM price_metrics WHERE aggregation = 'max'
UNION
SELECT metric FROM price_allowances
WHERE CAST($month AS DATE) >= effective_from AND (effective_to IS NULL OR CAST($month AS DATE) < effective_to)`;

/** Days priced in one transaction, and bucket rows priced (and their program days summed) in one statement:
 *  bound the memory a fill takes. */
const FILL_SLICE_DAYS = 3;
const FILL_CHUNK_ROWS = 14_000;
const DAY_MS = 86_400_000;

/** [from, to) day ranges, overlapping or adjacent ones merged, cut into slices of at most `days` days. */
export function daySlices(ranges: readonly (readonly [string, string])[], days: number): [string, string][] {
  const ms = (d: string) => Date.parse(`${d}T00:00:00Z`);
  const merged: [number, number][] = [];
  for (const [a, b] of [...ranges].map(([f, t]) => [ms(f), ms(t)] as const).sort((x, y) => x[0] - y[0])) {
    const last = merged.at(-1);
    if (last && a <= last[1]) last[1] = Math.max(last[1], b);
    else if (b > a) merged.push([a, b]);
  }
  const iso = (t: number) => new Date(t).toISOString().slice(0, 10);
  const out: [string, string][] = [];
  for (const [a, b] of merged)
    for (let t = a; t < b; t += days * DAY_MS) out.push([iso(t), iso(Math.min(b, t + days * DAY_MS))]);
  return out;
}

interface FreshWindow {
  run_id: string;
  replaced: boolean;
  api_version: string;
  org_key: string;
  collected_at: Date;
  from: string;
  to: string;
}

/** The keys of the windows' days within [from, to), as parallel lists, and the earliest of their writes. */
function windowKeys(
  windows: readonly FreshWindow[],
  from: string,
  to: string,
): { lists: { api_versions: string[]; orgs: string[]; days: string[] }; since: Date } {
  const lists = { api_versions: [] as string[], orgs: [] as string[], days: [] as string[] };
  let since: Date | null = null;
  for (const w of windows) {
    const a = w.from > from ? w.from : from;
    const b = w.to < to ? w.to : to;
    if (a >= b) continue;
    if (since === null || w.collected_at < since) since = w.collected_at;
    for (let t = Date.parse(`${a}T00:00:00Z`); t < Date.parse(`${b}T00:00:00Z`); t += DAY_MS) {
      lists.api_versions.push(w.api_version);
      lists.orgs.push(w.org_key);
      lists.days.push(new Date(t).toISOString().slice(0, 10));
    }
  }
  return { lists, since: since ?? new Date(0) };
}

export interface PricedSync {
  repriced: boolean;
  slices: number;
}

export interface AnomalyTotalsRow {
  program_id: string;
  org_id: string | null;
  day: string;
  actual: bigint;
  first_day: string;
  baseline: { day: string; cents: bigint }[];
}

/** Programs priced metric by metric at a time (alert_anomaly_totals_by_metric.sql). */
const BY_METRIC_PROGRAMS = 500;

export interface AnomalyTotalsParams {
  evalFrom: string;
  evalTo: string;
  baselineDays: number;
  /** Days of baseline the anomaly rule needs (fewer: new spend); without it, no day is left out for its excess. */
  minBaselineDays?: number;
  /** The rule's minimum excess: days spending less are left out, and days whose excess over a whole baseline is. */
  minActualCents: bigint;
  chunks?: number;
  chunk?: number;
}

function sortBaseline(r: AnomalyTotalsRow): AnomalyTotalsRow {
  r.baseline.sort((x, y) => (x.day < y.day ? -1 : x.day > y.day ? 1 : 0));
  return r;
}

export interface AnomalyDetailRow {
  program_id: string;
  day: string;
  bday: string;
  metric: string;
  cents: bigint;
}

export interface BudgetDayRow {
  scope_kind: 'organization' | 'program';
  scope_id: string;
  day: string;
  cents: bigint;
}

export interface DeliveryRecord {
  alertId: string;
  attempt: number;
  attemptedAt: Date;
  target: string;
  httpStatus: number | null;
  outcome: 'delivered' | 'failed';
  error: string | null;
}

/** The alerts' tables: the rules' priced inputs, the alerts fired, their acknowledgements and deliveries, the
 *  organizations' spending limits (store.alerts). */
export class Alerts {
  constructor(private readonly ctx: StoreContext) {}

  /**
   * Brings alert_priced_days and alert_program_days up to date: when the prices changed since they were
   * priced (or they never were), every stored day is priced again; otherwise only the (API version,
   * organization, day) keys of the daily windows runs replaced since the last call, from the rows those
   * runs wrote (so the bucket table is read only where they appended). Each slice of days is replaced in
   * one transaction and the runs are marked taken in only after, so an interrupted call is finished by
   * the next.
   */
  async syncPricedDays(now: Date): Promise<PricedSync> {
    const sql = this.ctx.sql;
    const [{ digest } = { digest: '' }] = await sql.query<{ digest: string }>(PRICED_DIGEST_SQL);
    const [state] = await sql.query<{ digest: string }>(PRICED_STATE_SQL);
    const repriced = state?.digest !== digest;
    if (repriced) {
      await this.ctx.transaction(async () => {
        for (const q of [
          PRICED_CLEAR_SQL,
          PROGRAM_DAYS_CLEAR_SQL,
          PRICED_RUNS_CLEAR_SQL,
          'DELETE FROM alert_priced_state',
        ])
          await sql.run(q);
        for (const t of ['alert_priced_days', 'alert_program_days'] as const)
          await sql.run(MARK_TABLE_DIRTY_SQL, { table_name: t });
      });
    }
    const fresh = await sql.query<FreshWindow>(PRICED_FRESH_SQL);
    const windows = fresh.filter((f) => f.replaced);
    let slices: [string, string][];
    if (repriced) {
      const [r] = await sql.query<{ from: string | null; to: string | null }>(DAILY_RANGE_SQL);
      slices = daySlices(r?.from && r.to ? [[r.from, r.to]] : [], FILL_SLICE_DAYS);
      for (const [from, to] of slices)
        await this.fillSlice({ from, to }, async () => {
          await sql.run(FILL_BUCKETS_OF_DAYS_SQL, { from, to });
          await sql.run(FILL_KEYS_OF_BUCKETS_SQL);
        });
    } else {
      slices = daySlices(
        windows.map((w) => [w.from, w.to]),
        FILL_SLICE_DAYS,
      );
      for (const [from, to] of slices) {
        const keys = windowKeys(windows, from, to);
        await this.fillSlice({ from, to }, async () => {
          await sql.run(FILL_KEYS_LISTED_SQL, keys.lists);
          await sql.run(FILL_BUCKETS_OF_KEYS_SQL, { since: keys.since, from, to });
        });
      }
    }
    const runs = [...new Set(fresh.map((f) => f.run_id))];
    if (runs.length > 0) await sql.run(PRICED_RUNS_ADD_SQL, { ids: runs });
    if (repriced) await sql.run(PRICED_STATE_SET_SQL, { digest, at: now });
    return { repriced, slices: slices.length };
  }

  /** One slice's keys replaced in one transaction: `select` fills alert_fill_keys and alert_fill_buckets. */
  private async fillSlice(days: { from: string; to: string }, select: () => Promise<void>): Promise<void> {
    const sql = this.ctx.sql;
    await this.ctx.transaction(async () => {
      await select();
      await sql.run(MARK_FILL_DAYS_DIRTY_SQL);
      await sql.run(PRICED_DELETE_KEYS_SQL, days);
      await sql.run(PROGRAM_DAYS_DELETE_KEYS_SQL, days);
      const [{ n } = { n: 0 }] = await sql.query<{ n: number }>(FILL_BUCKET_COUNT_SQL);
      const chunks = Math.max(1, Math.ceil(n / FILL_CHUNK_ROWS));
      // A chunk of programs at a time, priced then summed (both statements take the same programs), each
      // statement's memory handed back after it (releaseMemory): the process holds one chunk's at a time.
      for (let chunk = 0; chunk < chunks; chunk++) {
        await sql.run(readSql('src/store/sql/alert_priced_days_fill.sql'), { chunks, chunk });
        await this.ctx.releaseMemory();
        await sql.run(readSql('src/store/sql/alert_program_days_fill.sql'), { ...days, chunks, chunk });
        await this.ctx.releaseMemory();
      }
      for (const q of FILL_DROP_SQL) await sql.run(q);
    });
  }

  /** Programs with daily usage in [from, to): what decides how many chunks the rules read them in. */
  async dailyProgramCount(from: string, to: string): Promise<number> {
    const [r] = await this.ctx.sql.query<{ n: number }>(DAILY_PROGRAMS_SQL, { from, to });
    return r?.n ?? 0;
  }

  /**
   * One chunk (of `chunks`) of the programs' evaluated days: from the program days (alert_anomaly_totals.sql);
   * a program with a baseline day priced at other rates than its evaluated day is priced again metric by
   * metric (alert_anomaly_totals_by_metric.sql), so each baseline day is at the evaluated day's rates.
   */
  async anomalyTotals(p: AnomalyTotalsParams): Promise<AnomalyTotalsRow[]> {
    const rows = await this.ctx.sql.query<AnomalyTotalsRow & { exact: boolean }>(
      readSql('src/store/sql/alert_anomaly_totals.sql'),
      {
        eval_from: p.evalFrom,
        eval_to: p.evalTo,
        baseline_days: p.baselineDays,
        min_baseline_days: p.minBaselineDays ?? p.baselineDays + 1,
        min_actual_cents: p.minActualCents,
        chunks: p.chunks ?? 1,
        chunk: p.chunk ?? 0,
      },
    );
    const inexact = [...new Set(rows.filter((r) => !r.exact).map((r) => r.program_id))];
    const strip = ({ exact: _exact, ...r }: AnomalyTotalsRow & { exact: boolean }): AnomalyTotalsRow => sortBaseline(r);
    if (inexact.length === 0) return rows.map(strip);
    const again = new Set(inexact);
    const out = rows.filter((r) => !again.has(r.program_id)).map(strip);
    for (let i = 0; i < inexact.length; i += BY_METRIC_PROGRAMS)
      out.push(...(await this.anomalyTotalsByMetric(p, inexact.slice(i, i + BY_METRIC_PROGRAMS))));
    return out.sort((x, y) =>
      x.program_id === y.program_id ? (x.day < y.day ? -1 : 1) : x.program_id < y.program_id ? -1 : 1,
    );
  }

  /** Some programs' evaluated days, each baseline day priced metric by metric at the evaluated day's rates. */
  async anomalyTotalsByMetric(p: AnomalyTotalsParams, programs: string[]): Promise<AnomalyTotalsRow[]> {
    if (programs.length === 0) return [];
    return (
      await this.ctx.sql.query<AnomalyTotalsRow>(readSql('src/store/sql/alert_anomaly_totals_by_metric.sql'), {
        eval_from: p.evalFrom,
        eval_to: p.evalTo,
        baseline_days: p.baselineDays,
        min_actual_cents: p.minActualCents,
        programs,
      })
    ).map(sortBaseline);
  }

  async anomalyDetail(p: {
    evalFrom: string;
    evalTo: string;
    baselineDays: number;
    keys: string[];
  }): Promise<AnomalyDetailRow[]> {
    if (p.keys.length === 0) return [];
    return this.ctx.sql.query<AnomalyDetailRow>(readSql('src/store/sql/alert_anomaly_detail.sql'), {
      eval_from: p.evalFrom,
      eval_to: p.evalTo,
      baseline_days: p.baselineDays,
      keys: p.keys,
    });
  }

  /** One chunk (of `chunks`) of the month's net spend of the organizations and programs that have a budget
   *  (alert_budget_days.sql). */
  async budgetDays(
    month: string,
    scope: { orgs: string[]; programs: string[] },
    chunks = 1,
    chunk = 0,
  ): Promise<BudgetDayRow[]> {
    const metrics = (await this.ctx.sql.query<{ metric: string }>(BUDGET_LINE_METRICS_SQL, { month })).map(
      (r) => r.metric,
    );
    return this.ctx.sql.query<BudgetDayRow>(readSql('src/store/sql/alert_budget_days.sql'), {
      month,
      orgs: scope.orgs,
      programs: scope.programs,
      metrics,
      chunks,
      chunk,
    });
  }

  async dailyBounds(): Promise<{ firstDay: string | null; coveredTo: Date | null }> {
    const [r] = await this.ctx.sql.query<{ first_day: string | null; covered_to: Date | null }>(DAILY_BOUNDS_SQL);
    return { firstDay: r?.first_day ?? null, coveredTo: r?.covered_to ?? null };
  }

  async programNames(ids: string[]): Promise<Map<string, { name: string | null; orgId: string | null }>> {
    if (ids.length === 0) return new Map();
    const rows = await this.ctx.sql.query<{ id: string; name: string | null; org_id: string | null }>(
      PROGRAM_NAMES_SQL,
      { ids },
    );
    return new Map(rows.map((r) => [r.id, { name: r.name, orgId: r.org_id }]));
  }

  async orgNames(): Promise<Map<string, string | null>> {
    const rows = await this.ctx.sql.query<{ id: string; name: string | null }>(ORG_NAMES_SQL);
    return new Map(rows.map((r) => [r.id, r.name]));
  }

  async knownOrgs(): Promise<string[]> {
    return (await this.ctx.sql.query<{ org_id: string }>(ORGS_KNOWN_SQL)).map((r) => r.org_id);
  }

  /** Inserts the alerts whose identity is new, in one transaction; returns those inserted. */
  async insertNewAlerts(alerts: AlertRecord[]): Promise<AlertRecord[]> {
    if (alerts.length === 0) return [];
    const sql = this.ctx.sql;
    return this.ctx.transaction(async () => {
      const existing = new Set(
        (await sql.query<{ identity: string }>(ALERTS_EXISTING_SQL, { ids: alerts.map((a) => a.identity) })).map(
          (r) => r.identity,
        ),
      );
      const fresh = alerts.filter((a) => !existing.has(a.identity));
      if (fresh.length === 0) return [];
      const json = JSON.stringify(
        fresh.map((a) => ({
          ...a,
          fired_at: a.fired_at.toISOString(),
          superseded_at: a.superseded_at?.toISOString() ?? null,
        })),
      );
      await sql.run(ALERTS_INSERT_SQL, { json });
      return fresh;
    });
  }

  async openAlertsIn(
    kinds: string[],
    from: string,
    to: string,
  ): Promise<{ identity: string; kind: string; month: string; day: string | null }[]> {
    return this.ctx.sql.query(ALERTS_OPEN_IN_SQL, { kinds, from, to });
  }

  async supersedeAlerts(ids: string[], at: Date, reason: string): Promise<void> {
    if (ids.length === 0) return;
    await this.ctx.sql.run(ALERTS_SUPERSEDE_SQL, { ids, at, reason });
  }

  async listAlerts(month?: string): Promise<AlertRecord[]> {
    return this.ctx.sql.query<AlertRecord>(ALERTS_LIST_SQL, { month: month ?? '' });
  }

  /**
   * Acknowledges an alert (`alerts --ack`): recorded once, with who, when and the note. Returns the alert
   * as listed after (with the acknowledgement that stands: an earlier one is kept), or null when no alert
   * has that id.
   */
  async acknowledgeAlert(a: {
    alertId: string;
    at: Date;
    by: string;
    note: string | null;
  }): Promise<AlertRecord | null> {
    const sql = this.ctx.sql;
    await sql.run(ALERT_ACK_SQL, { alert_id: a.alertId, at: a.at, by: a.by, note: a.note });
    return (await this.listAlerts()).find((r) => r.alert_id === a.alertId) ?? null;
  }

  async undeliveredAlerts(): Promise<{ alert_id: string; attempts: number }[]> {
    return this.ctx.sql.query(ALERTS_UNDELIVERED_SQL);
  }

  async wasDelivered(alertId: string): Promise<boolean> {
    const [r] = await this.ctx.sql.query<{ n: number }>(DELIVERED_SQL, { alert_id: alertId });
    return (r?.n ?? 0) > 0;
  }

  async recordDelivery(d: DeliveryRecord): Promise<void> {
    await this.ctx.sql.run(DELIVERY_RECORD_SQL, {
      alert_id: d.alertId,
      attempt: d.attempt,
      attempted_at: d.attemptedAt,
      target: d.target,
      http_status: d.httpStatus,
      outcome: d.outcome,
      error: d.error,
    });
  }

  async recordSpendingLimit(orgId: string, limitCents: bigint | null, answer: string, readAt: Date): Promise<void> {
    await this.ctx.sql.run(SPENDING_LIMIT_RECORD_SQL, {
      org_id: orgId,
      limit_cents: limitCents,
      answer,
      read_at: readAt,
    });
  }

  async spendingLimits(): Promise<Map<string, bigint | null>> {
    const rows = await this.ctx.sql.query<{ org_id: string; limit_cents: bigint | null }>(SPENDING_LIMITS_SQL);
    return new Map(rows.map((r) => [r.org_id, r.limit_cents]));
  }
}

// Evaluates the alert rules (rules.ts) on what the store holds for some days and months, and keeps
// what fired (store/alerts.ts): a new alert is inserted once; an open one the data no longer supports
// is marked superseded. Re-running with the same data changes nothing.
import { createHash } from 'node:crypto';
import { formatScaled, parseDecimal } from '../billing/money.js';
import type { Config } from '../config/schema.js';
import { collectPageGarbage } from '../heap.js';
import { forecastDays } from '../report/forecast.js';
import { type AlertRecord, type AnomalyTotalsRow } from '../store/alerts.js';
import type { Store } from '../store/store.js';
import {
  ANOMALY_RULE,
  ANOMALY_RULE_VERSION,
  BUDGET_RULE,
  BUDGET_RULE_VERSION,
  CATEGORIES,
  categoryOf,
  contributions,
  decideAnomaly,
  decideBudget,
  medianCents,
  type AnomalySettings,
  type Category,
} from './rules.js';

const DAY_MS = 86_400_000;
/** Programs the anomaly rule reads at a time (their days summed by program: a few small integers a day). */
const CHUNK_PROGRAMS = 2000;
/** Programs the budgets read at a time: a day's spend a program, and the lines an allowance applies to. */
const BUDGET_CHUNK_PROGRAMS = 10_000;
/** Evaluated days the anomaly rule reads at a time. */
const SLICE_DAYS = 7;

export interface BudgetSpec {
  name: string;
  scopeKind: 'organization' | 'program' | 'programs';
  /** Organization id, program id or the budget's name (a set). */
  scopeId: string;
  programs: string[];
  amountCents: bigint | null;
  thresholdsPct: number[];
}

export interface AlertSettings {
  anomaly: AnomalySettings;
  budgets: BudgetSpec[];
  orgBudgetFromLimit: boolean;
  orgThresholdsPct: number[];
  /** Days the collector re-reads (collect.settle.daily_days): a day is settled once past them. */
  settleDays: number;
  /** Programs the rules read at a time (default CHUNK_PROGRAMS, BUDGET_CHUNK_PROGRAMS). */
  chunkPrograms?: number;
}

export function alertSettings(config: Config): AlertSettings {
  const a = config.alerts;
  const cents = (s: string) => parseDecimal(s, 2) ?? 0n;
  return {
    anomaly: {
      minExcessCents: cents(a.anomaly.min_excess_usd),
      minRatio: a.anomaly.min_ratio,
      minScore: a.anomaly.min_score,
      baselineDays: a.anomaly.baseline_days,
      minBaselineDays: a.anomaly.min_baseline_days,
    },
    budgets: config.budgets.map((b) => {
      const programs = b.programs ?? [];
      const scopeKind = b.organization !== undefined ? 'organization' : programs.length === 1 ? 'program' : 'programs';
      const scopeId = b.organization ?? (programs.length === 1 ? programs[0]! : b.name);
      return {
        name: b.name,
        scopeKind,
        scopeId,
        programs,
        amountCents: b.amount_usd !== undefined ? cents(b.amount_usd) : null,
        thresholdsPct: b.thresholds_pct,
      };
    }),
    orgBudgetFromLimit: a.organization_budget === 'spending_limit',
    orgThresholdsPct: a.organization_thresholds_pct,
    settleDays: config.collect.settle.daily_days,
  };
}

/** Day strings already written: each evaluated program-day lists its baseline's days, the same few dozen. */
const DAY_TEXT = new Map<number, string>();
function day(ms: number): string {
  let text = DAY_TEXT.get(ms);
  if (text === undefined) {
    if (DAY_TEXT.size >= 10_000) DAY_TEXT.clear();
    text = new Date(ms).toISOString().slice(0, 10);
    DAY_TEXT.set(ms, text);
  }
  return text;
}
const dayMs = (d: string) => Date.parse(`${d}T00:00:00Z`);
const usd = (c: bigint) => formatScaled(c, 2);
const monthOf = (d: string) => `${d.slice(0, 7)}-01`;

export function alertId(identity: string): string {
  return `al-${createHash('sha256').update(identity).digest('hex').slice(0, 16)}`;
}

function blank(
  identity: string,
  firedAt: Date,
): Pick<AlertRecord, 'alert_id' | 'identity' | 'status' | 'fired_at' | 'superseded_at' | 'superseded_reason'> &
  Partial<AlertRecord> {
  const out: Partial<AlertRecord> = {};
  for (const c of CATEGORIES) out[`${c}_usd`] = null;
  return {
    ...out,
    alert_id: alertId(identity),
    identity,
    status: 'open',
    fired_at: firedAt,
    superseded_at: null,
    superseded_reason: null,
    threshold_pct: null,
    day: null,
    org_id: null,
    org_name: null,
    program_id: null,
    program_name: null,
    budget_usd: null,
    threshold_usd: null,
    expected_usd: null,
    actual_usd: null,
    impact_usd: null,
    impact_pct: null,
    score: null,
    crossing_date: null,
  };
}

/** The last day that is complete and settled at `now`, exclusive (UTC midnight), given the daily coverage. */
export function settledEnd(now: Date, settleDays: number, coveredTo: Date | null): number {
  const byClock = Math.floor(now.getTime() / DAY_MS) * DAY_MS - settleDays * DAY_MS;
  const byData = coveredTo === null ? -Infinity : Math.floor(coveredTo.getTime() / DAY_MS) * DAY_MS;
  return Math.min(byClock, byData);
}

/** The baseline of one program's day: each day from its first (within the window) to the day before, zeros included. */
function baselineDays(r: AnomalyTotalsRow, dataFirstDay: string | null, window: number): string[] {
  const d = dayMs(r.day);
  const start = Math.max(
    d - window * DAY_MS,
    dayMs(r.first_day),
    dataFirstDay === null ? -Infinity : dayMs(dataFirstDay),
  );
  const out: string[] = [];
  for (let t = start; t < d; t += DAY_MS) out.push(day(t));
  return out;
}

interface Anomalies {
  fired: AlertRecord[];
  evaluated: { from: string; to: string } | null;
}

/** The anomaly rule's inputs for the days [from, end): in chunks of about CHUNK_PROGRAMS programs and a
 *  week of evaluated days at a time (each day joins its whole baseline), each chunk's memory handed back
 *  after it, and each chunk's rows decided before the next is read, so a large account stays in bounded
 *  memory however many days a run replaced. */
async function* anomalyTotalChunks(
  store: Store,
  s: AlertSettings,
  from: string,
  end: number,
): AsyncGenerator<AnomalyTotalsRow[]> {
  const a = s.anomaly;
  const loadFrom = day(dayMs(from) - a.baselineDays * DAY_MS);
  const programs = await store.alerts.dailyProgramCount(loadFrom, day(end));
  const chunks = Math.max(1, Math.ceil(programs / (s.chunkPrograms ?? CHUNK_PROGRAMS)));
  for (let start = dayMs(from); start < end; start += SLICE_DAYS * DAY_MS) {
    const sliceTo = day(Math.min(end, start + SLICE_DAYS * DAY_MS));
    for (let chunk = 0; chunk < chunks; chunk++) {
      const rows = await store.alerts.anomalyTotals({
        evalFrom: day(start),
        evalTo: sliceTo,
        baselineDays: a.baselineDays,
        minBaselineDays: a.minBaselineDays,
        minActualCents: a.minExcessCents,
        chunks,
        chunk,
      });
      await store.releaseMemory();
      // Each chunk's rows (a week of a few thousand programs with their baselines) are garbage once
      // decided; V8 let 30 days of them pile up to 309 MB of heap before collecting (BENCHMARKS.md, "The
      // anomaly rule's garbage collected after each chunk (2026-11-29)").
      collectPageGarbage();
      yield rows;
    }
  }
}

async function evaluateAnomalies(
  store: Store,
  s: AlertSettings,
  from: string,
  to: string,
  now: Date,
): Promise<Anomalies> {
  const bounds = await store.alerts.dailyBounds();
  const end = Math.min(dayMs(to), settledEnd(now, s.settleDays, bounds.coveredTo));
  if (!(end > dayMs(from))) return { fired: [], evaluated: null };
  const evalTo = day(end);
  const a = s.anomaly;
  const found: { r: AnomalyTotalsRow; days: string[]; decision: NonNullable<ReturnType<typeof decideAnomaly>> }[] = [];
  for await (const rows of anomalyTotalChunks(store, s, from, end)) {
    for (const r of rows) {
      const days = baselineDays(r, bounds.firstDay, a.baselineDays);
      // A program whose usage starts with the stored data has history before it: not new spend.
      if (days.length < a.minBaselineDays && (bounds.firstDay === null || r.first_day <= bounds.firstDay)) continue;
      const present = new Map(r.baseline.map((b) => [b.day, BigInt(b.cents)]));
      const decision = decideAnomaly(
        BigInt(r.actual),
        days.map((d) => present.get(d) ?? 0n),
        a,
      );
      if (decision) found.push({ r, days, decision });
    }
  }
  const detail = await store.alerts.anomalyDetail({
    evalFrom: from,
    evalTo,
    baselineDays: a.baselineDays,
    keys: found.map((f) => `${f.r.program_id}|${f.r.day}`),
  });
  const byKey = new Map<string, typeof detail>();
  for (const d of detail) {
    const k = `${d.program_id}|${d.day}`;
    (byKey.get(k) ?? byKey.set(k, []).get(k)!).push(d);
  }
  const names = await store.alerts.programNames([...new Set(found.map((f) => f.r.program_id))]);
  const orgs = await store.alerts.orgNames();
  const fired = found.map(({ r, days, decision }) => {
    const lines = byKey.get(`${r.program_id}|${r.day}`) ?? [];
    const actualBy = new Map<Category, bigint>();
    const perDay = new Map<Category, Map<string, bigint>>();
    for (const l of lines) {
      const c = categoryOf(l.metric);
      if (l.bday === r.day) actualBy.set(c, (actualBy.get(c) ?? 0n) + BigInt(l.cents));
      else {
        const m = perDay.get(c) ?? perDay.set(c, new Map()).get(c)!;
        m.set(l.bday, (m.get(l.bday) ?? 0n) + BigInt(l.cents));
      }
    }
    const medians = new Map(CATEGORIES.map((c) => [c, medianCents(days.map((d) => perDay.get(c)?.get(d) ?? 0n))]));
    const contrib = contributions(decision.expected, actualBy, medians);
    return anomalyRecord(r, decision, contrib, { names, orgs, settings: a, days: days.length, now });
  });
  return { fired, evaluated: { from, to: evalTo } };
}

function anomalyRecord(
  r: AnomalyTotalsRow,
  dcs: NonNullable<ReturnType<typeof decideAnomaly>>,
  contrib: Map<Category, bigint>,
  o: {
    names: Map<string, { name: string | null; orgId: string | null }>;
    orgs: Map<string, string | null>;
    settings: AnomalySettings;
    days: number;
    now: Date;
  },
): AlertRecord {
  const identity = `${dcs.kind}|program|${r.program_id}|${monthOf(r.day)}|${r.day}`;
  const programName = o.names.get(r.program_id)?.name ?? null;
  const orgId = r.org_id ?? o.names.get(r.program_id)?.orgId ?? null;
  const pct = dcs.expected === 0n ? null : formatScaled((dcs.impact * 10_000n) / dcs.expected, 2);
  const top = [...contrib.entries()].sort((x, y) => (x[1] < y[1] ? 1 : x[1] > y[1] ? -1 : 0))[0];
  const who = `${programName ?? r.program_id} (${r.program_id}${orgId ? `, ${o.orgs.get(orgId) ?? orgId}` : ''})`;
  const message =
    dcs.kind === 'new_spend'
      ? `New spend: ${who} spent USD ${usd(dcs.actual)} on ${r.day} with no baseline yet (${dcs.baselineDays} day(s) of history)`
      : `Anomaly: ${who} spent USD ${usd(dcs.actual)} on ${r.day}, expected ${usd(dcs.expected)}: +${usd(dcs.impact)} (+${pct}%), ` +
        `score ${dcs.score.toFixed(1)}; largest contribution ${top?.[0]} ${usd(top?.[1] ?? 0n)}`;
  const s = o.settings;
  const rec: AlertRecord = {
    ...blank(identity, o.now),
    kind: dcs.kind,
    rule: ANOMALY_RULE,
    rule_version: ANOMALY_RULE_VERSION,
    month: monthOf(r.day),
    scope_kind: 'program',
    scope_id: r.program_id,
    threshold_pct: null,
    day: r.day,
    org_id: orgId,
    org_name: orgId ? (o.orgs.get(orgId) ?? null) : null,
    program_id: r.program_id,
    program_name: programName,
    expected_usd: usd(dcs.expected),
    actual_usd: usd(dcs.actual),
    impact_usd: usd(dcs.impact),
    impact_pct: pct,
    score: dcs.score === null ? null : Math.round(dcs.score * 100) / 100,
    crossing_date: null,
    message,
    detail: JSON.stringify({
      rule: `${ANOMALY_RULE} v${ANOMALY_RULE_VERSION}`,
      parameters: {
        min_excess_usd: usd(s.minExcessCents),
        min_ratio: s.minRatio,
        min_score: s.minScore,
        baseline_days: s.baselineDays,
        min_baseline_days: s.minBaselineDays,
      },
      baseline_days_used: o.days,
      mad_usd: dcs.mad === null ? null : usd(dcs.mad),
      pricing: "daily buckets of summed metrics at list rates before allowances; baseline usage at the day's rates",
    }),
  } as AlertRecord;
  for (const c of CATEGORIES) (rec as unknown as Record<string, string>)[`${c}_usd`] = usd(contrib.get(c) ?? 0n);
  return rec;
}

interface BudgetScope {
  spec: BudgetSpec;
  budget: bigint;
  orgName: string | null;
}

async function budgetScopes(store: Store, s: AlertSettings, orgIds: Iterable<string>): Promise<BudgetScope[]> {
  const names = await store.alerts.orgNames();
  const out: BudgetScope[] = [];
  const named = new Set(s.budgets.filter((b) => b.scopeKind === 'organization').map((b) => b.scopeId));
  const limits = await store.alerts.spendingLimits();
  for (const b of s.budgets) {
    const budget = b.amountCents ?? (b.scopeKind === 'organization' ? (limits.get(b.scopeId) ?? null) : null);
    if (budget !== null && budget > 0n)
      out.push({ spec: b, budget, orgName: b.scopeKind === 'organization' ? (names.get(b.scopeId) ?? null) : null });
  }
  if (s.orgBudgetFromLimit) {
    for (const org of orgIds) {
      const limit = limits.get(org);
      if (named.has(org) || limit === undefined || limit === null || limit <= 0n) continue;
      out.push({
        spec: {
          name: 'spending limit',
          scopeKind: 'organization',
          scopeId: org,
          programs: [],
          amountCents: null,
          thresholdsPct: s.orgThresholdsPct,
        },
        budget: limit,
        orgName: names.get(org) ?? null,
      });
    }
  }
  return out;
}

/** The organizations a budget is about: named ones, and (by default) each with a spending limit. */
function budgetedOrgs(s: AlertSettings, limits: Map<string, bigint | null>): string[] {
  const named = s.budgets.filter((b) => b.scopeKind === 'organization').map((b) => b.scopeId);
  const limited = s.orgBudgetFromLimit ? [...limits].filter(([, l]) => l !== null && l > 0n).map(([o]) => o) : [];
  return [...new Set([...named, ...limited])];
}

async function evaluateBudgets(store: Store, s: AlertSettings, month: string, now: Date): Promise<AlertRecord[]> {
  const start = dayMs(month);
  const next = new Date(start);
  next.setUTCMonth(next.getUTCMonth() + 1);
  const programs = [...new Set(s.budgets.flatMap((b) => b.programs))];
  const orgs = budgetedOrgs(s, await store.alerts.spendingLimits());
  if (orgs.length === 0 && programs.length === 0) return [];
  const nextDay = day(next.getTime());
  const chunks = Math.max(
    1,
    Math.ceil((await store.alerts.dailyProgramCount(month, nextDay)) / (s.chunkPrograms ?? BUDGET_CHUNK_PROGRAMS)),
  );
  const rows = [];
  for (let chunk = 0; chunk < chunks; chunk++) {
    rows.push(...(await store.alerts.budgetDays(month, { orgs, programs }, chunks, chunk)));
    await store.releaseMemory();
  }
  const daysOf = new Map<string, Map<number, bigint>>();
  const add = (key: string, d: number, c: bigint) => {
    const m = daysOf.get(key) ?? daysOf.set(key, new Map()).get(key)!;
    m.set(d, (m.get(d) ?? 0n) + c);
  };
  for (const r of rows) add(`${r.scope_kind}|${r.scope_id}`, dayMs(r.day), BigInt(r.cents));
  const orgIds = [...daysOf.keys()]
    .filter((k) => k.startsWith('organization|'))
    .map((k) => k.slice('organization|'.length));
  const bounds = await store.alerts.dailyBounds();
  const f = forecastDays({ rangeStart: new Date(start), rangeEnd: next, now, dataEnd: bounds.coveredTo });
  const out: AlertRecord[] = [];
  for (const scope of await budgetScopes(store, s, orgIds)) {
    const days = new Map<number, bigint>();
    const keys =
      scope.spec.scopeKind === 'organization'
        ? [`organization|${scope.spec.scopeId}`]
        : scope.spec.programs.map((p) => `program|${p}`);
    for (const k of keys) for (const [d, c] of daysOf.get(k) ?? []) days.set(d, (days.get(d) ?? 0n) + c);
    const sum = (pred: (d: number) => boolean) => [...days].reduce((a, [d, c]) => (pred(d) ? a + c : a), 0n);
    const inputs = {
      budgetCents: scope.budget,
      thresholdsPct: scope.spec.thresholdsPct,
      monthToDate: sum(() => true),
      days: [...days],
      completeDaysSpend: sum((d) => d < f.cutoff),
      windowSpend: sum((d) => d < f.cutoff && d >= f.windowStart),
      windowDays: f.windowDays,
      remainingDays: f.remainingDays,
      cutoff: f.cutoff,
    };
    for (const fire of decideBudget(inputs)) out.push(budgetRecord(scope, month, fire, inputs, now));
  }
  return out;
}

function budgetRecord(
  scope: BudgetScope,
  month: string,
  fire: ReturnType<typeof decideBudget>[number],
  inputs: Parameters<typeof decideBudget>[0],
  now: Date,
): AlertRecord {
  const sp = scope.spec;
  const identity = `${fire.kind}|${sp.scopeKind}|${sp.scopeId}|${month}|${fire.thresholdPct}`;
  const label = `${sp.scopeKind === 'organization' ? `organization ${scope.orgName ?? sp.scopeId}` : `${sp.scopeKind} ${sp.scopeId}`} (budget "${sp.name}", USD ${usd(scope.budget)})`;
  const when = fire.day === null ? '' : ` on ${day(fire.day)}`;
  const message =
    fire.kind === 'budget_actual'
      ? `Budget ACTUAL: ${label}: month-to-date USD ${usd(fire.actual)} reached ${fire.thresholdPct}% (USD ${usd(fire.thresholdCents)})${when}`
      : `Budget FORECASTED: ${label}: the month-end projection USD ${usd(fire.projection ?? 0n)} reaches ${fire.thresholdPct}% ` +
        `(USD ${usd(fire.thresholdCents)})${fire.day === null ? '' : ` on ${day(fire.day)}`}`;
  return {
    ...blank(identity, now),
    kind: fire.kind,
    rule: BUDGET_RULE,
    rule_version: BUDGET_RULE_VERSION,
    month,
    scope_kind: sp.scopeKind,
    scope_id: sp.scopeId,
    threshold_pct: fire.thresholdPct,
    day: fire.kind === 'budget_actual' && fire.day !== null ? day(fire.day) : null,
    org_id: sp.scopeKind === 'organization' ? sp.scopeId : null,
    org_name: scope.orgName,
    program_id: sp.scopeKind === 'program' ? sp.scopeId : null,
    budget_usd: usd(scope.budget),
    threshold_usd: usd(fire.thresholdCents),
    expected_usd: fire.projection === null ? null : usd(fire.projection),
    actual_usd: usd(fire.actual),
    crossing_date: fire.kind === 'budget_forecast' && fire.day !== null ? day(fire.day) : null,
    message,
    detail: JSON.stringify({
      rule: `${BUDGET_RULE} v${BUDGET_RULE_VERSION}`,
      budget: sp.name,
      budget_source: sp.amountCents === null ? 'spending_limit' : 'config',
      programs: sp.programs,
      as_of: now.toISOString(),
      complete_through: day(inputs.cutoff),
      complete_days_usd: usd(inputs.completeDaysSpend),
      window_usd: usd(inputs.windowSpend),
      window_days: inputs.windowDays,
      remaining_days: inputs.remainingDays,
    }),
  } as AlertRecord;
}

export interface EvaluationScope {
  /** Anomaly days [from, to) (YYYY-MM-DD); only the settled ones are evaluated. */
  days?: { from: string; to: string };
  /** Budget months (YYYY-MM-01). */
  months: string[];
}

export interface EvaluationResult {
  fired: AlertRecord[];
  superseded: number;
}

/**
 * Evaluates the rules on `scope` and stores what fired; open alerts the data no longer supports are
 * superseded. With `memoryLimit`, DuckDB's limit is that while evaluating and the store's own after.
 */
export async function evaluateAlerts(
  store: Store,
  s: AlertSettings,
  scope: EvaluationScope,
  now: Date,
  memoryLimit?: string,
): Promise<EvaluationResult> {
  if (memoryLimit === undefined) return evaluate(store, s, scope, now);
  // Evaluating again after running out is safe: each slice of priced days is replaced in its own
  // transaction, and an alert fires once.
  return store.atMemoryLimit(memoryLimit, () => evaluate(store, s, scope, now));
}

async function evaluate(store: Store, s: AlertSettings, scope: EvaluationScope, now: Date): Promise<EvaluationResult> {
  // The rules read the priced days: first take in the days runs replaced since (or new prices).
  await store.alerts.syncPricedDays(now);
  const candidates: AlertRecord[] = [];
  let stale: string[] = [];
  if (scope.days) {
    const a = await evaluateAnomalies(store, s, scope.days.from, scope.days.to, now);
    candidates.push(...a.fired);
    if (a.evaluated) {
      const still = new Set(a.fired.map((f) => f.identity));
      stale = (await store.alerts.openAlertsIn(['anomaly', 'new_spend'], a.evaluated.from, a.evaluated.to))
        .map((o) => o.identity)
        .filter((i) => !still.has(i));
    }
  }
  for (const month of scope.months) {
    const b = await evaluateBudgets(store, s, month, now);
    candidates.push(...b);
    const still = new Set(b.map((f) => f.identity));
    const next = new Date(dayMs(month));
    next.setUTCMonth(next.getUTCMonth() + 1);
    stale.push(
      ...(await store.alerts.openAlertsIn(['budget_actual'], month, day(next.getTime())))
        .map((o) => o.identity)
        .filter((i) => !still.has(i)),
    );
  }
  const fired = await store.alerts.insertNewAlerts(candidates);
  await store.alerts.supersedeAlerts(stale, now, 'restated: the stored data no longer meets the rule');
  return { fired, superseded: stale.length };
}

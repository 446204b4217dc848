// Alerts wired for the collect command, the daemon's jobs and the `alerts` command: the organizations'
// spending limits read from the API, the rules evaluated on what a collection changed (or on a month),
// and the webhook fed. After a collection nothing here may fail it: problems are logged as warnings.
import type { ApiClient } from '../api/client.js';
import { readSpendingLimit } from '../api/spendingLimit.js';
import { alertSettings, evaluateAlerts, type EvaluationScope } from '../alerts/evaluate.js';
import { deliverAlerts, type DeliveryOutcome } from '../alerts/webhook.js';
import type { CollectResult } from '../collect/types.js';
import { type AlertRecord } from '../store/alerts.js';
import type { Store } from '../store/store.js';
import type { CommandContext } from './context.js';

const DAY_MS = 86_400_000;
const dayOf = (ms: number) => new Date(ms).toISOString().slice(0, 10);
const monthOf = (ms: number) => `${new Date(ms).toISOString().slice(0, 7)}-01`;

export interface AlertsRunSummary {
  fired: number;
  superseded: number;
  delivered: number;
  failedDeliveries: number;
}

/** Reads each known organization's spending limit; a failure keeps the value read before. */
async function refreshSpendingLimits(
  ctx: CommandContext,
  store: Store,
  client: ApiClient,
  now: Date,
  signal?: AbortSignal,
): Promise<void> {
  if (ctx.config.alerts.organization_budget === 'none') return;
  for (const org of await store.alerts.knownOrgs()) {
    if (signal?.aborted) return;
    try {
      const limit = await readSpendingLimit(client, org, signal);
      await store.alerts.recordSpendingLimit(
        org,
        limit.answer === 'limit' ? limit.cents : null,
        limit.answer === 'limit' ? 'limit' : `none (${limit.status})`,
        now,
      );
    } catch (err) {
      ctx.log.warn(
        `spending limit of ${org} not read (${(err as Error).message.split('\n')[0]}); the last one read stays in use`,
      );
    }
  }
}

/**
 * The days and months a collection changed: its committed daily windows (which start at the settle
 * window, so they hold the day that settled since the last run) and a day before, their months, the current month.
 */
export function changedScope(result: Pick<CollectResult, 'scopes'>, now: number): EvaluationScope | null {
  let from = Infinity;
  let to = -Infinity;
  const months = new Set<string>();
  for (const s of result.scopes) {
    if (s.source === 'inventory' || s.rows === 0 || s.from === null || s.to === null) continue;
    const a = Date.parse(s.from);
    const b = Date.parse(s.to);
    for (
      let m = Date.parse(monthOf(a));
      m < b;
      m = Date.UTC(new Date(m).getUTCFullYear(), new Date(m).getUTCMonth() + 1)
    )
      months.add(monthOf(m));
    if (s.granularity !== 'daily') continue;
    from = Math.min(from, a);
    to = Math.max(to, b);
  }
  if (months.size === 0) return null;
  months.add(monthOf(now));
  return {
    ...(from < to
      ? {
          days: {
            from: dayOf(Math.floor(from / DAY_MS) * DAY_MS - DAY_MS),
            to: dayOf(Math.ceil(to / DAY_MS) * DAY_MS),
          },
        }
      : {}),
    months: [...months].sort(),
  };
}

async function deliver(ctx: CommandContext, store: Store, signal?: AbortSignal): Promise<DeliveryOutcome> {
  const a = ctx.config.alerts;
  if (a.webhook_url === undefined) return { delivered: 0, failed: 0 };
  return deliverAlerts(
    store,
    { url: a.webhook_url, timeoutMs: a.webhook_timeout_ms, maxAttempts: a.webhook_max_attempts },
    { log: ctx.log, ...(signal ? { signal } : {}) },
  );
}

/** After a collection: limits, evaluation of what changed, deliveries. Never throws. */
export async function alertsAfterCollect(
  ctx: CommandContext,
  store: Store,
  client: ApiClient,
  result: Pick<CollectResult, 'scopes'>,
  o: { now: number; signal?: AbortSignal },
): Promise<AlertsRunSummary | null> {
  if (!ctx.config.alerts.enabled) return null;
  try {
    const now = new Date(o.now);
    const scope = changedScope(result, o.now);
    await refreshSpendingLimits(ctx, store, client, now, o.signal);
    // At alerts.memory_limit: the rules read what the runs replaced and a month of kept program days in
    // chunks, so evaluating them adds little to what the collection itself held.
    const r = scope
      ? await evaluateAlerts(store, alertSettings(ctx.config), scope, now, ctx.config.alerts.memory_limit)
      : { fired: [], superseded: 0 };
    for (const a of r.fired) ctx.log.warn(`alert ${a.alert_id}: ${a.message}`);
    const d = await deliver(ctx, store, o.signal);
    return { fired: r.fired.length, superseded: r.superseded, delivered: d.delivered, failedDeliveries: d.failed };
  } catch (err) {
    ctx.log.warn(
      `alerts were not evaluated after this collection (${(err as Error).message.split('\n')[0]}); \`usage-pipeline alerts\` evaluates them`,
    );
    return null;
  }
}

export interface AlertsCommandResult extends AlertsRunSummary {
  month: string;
  alerts: AlertRecord[];
  /** Open alerts of the current month not acknowledged: what `alerts --check` fails on. */
  openCurrent: number;
}

/** An alert someone still has to look at: open (not superseded) and not acknowledged. */
export function needsAttention(a: AlertRecord): boolean {
  return a.status === 'open' && (a.acknowledged_at ?? null) === null;
}

/** `alerts --ack`: records who acknowledged the alert, when and why. Null when no alert has that id. */
export async function acknowledge(
  store: Store,
  o: { alertId: string; by: string; note: string | null; now: Date },
): Promise<AlertRecord | null> {
  return store.alerts.acknowledgeAlert({ alertId: o.alertId, at: o.now, by: o.by, note: o.note });
}

/** `alerts`: evaluates the month (every settled day, its budgets), delivers what is pending, lists the month's alerts. */
export async function evaluateMonth(
  ctx: CommandContext,
  store: Store,
  o: { month: string; now: Date; signal?: AbortSignal },
): Promise<AlertsCommandResult> {
  const start = Date.parse(`${o.month}T00:00:00Z`);
  const end = Date.UTC(new Date(start).getUTCFullYear(), new Date(start).getUTCMonth() + 1);
  const r = await evaluateAlerts(
    store,
    alertSettings(ctx.config),
    { days: { from: dayOf(start), to: dayOf(end) }, months: [o.month] },
    o.now,
  );
  const d = await deliver(ctx, store, o.signal);
  const alerts = await store.alerts.listAlerts(o.month);
  const current = monthOf(o.now.getTime());
  const openCurrent = (o.month === current ? alerts : await store.alerts.listAlerts(current)).filter(
    needsAttention,
  ).length;
  return {
    month: o.month,
    alerts,
    openCurrent,
    fired: r.fired.length,
    superseded: r.superseded,
    delivered: d.delivered,
    failedDeliveries: d.failed,
  };
}

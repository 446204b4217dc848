// `usage-pipeline alerts [--month YYYY-MM] [--json] [--check]`: evaluates the month's budgets and
// settled days not yet evaluated, delivers what the webhook has not taken, and lists the month's alerts.
import { commandContext, openCommandStore, type CommonOptions } from '../app/context.js';
import { evaluateMonth, type AlertsCommandResult } from '../app/alerts.js';
import { alertPayload } from '../alerts/webhook.js';
import { UsageError } from '../domain/errors.js';

export interface AlertsOptions extends CommonOptions {
  month?: string;
  json?: boolean;
  check?: boolean;
  signal?: AbortSignal;
}

/** The month asked for (default: the current one, UTC), checked before anything is opened. */
export function prepareAlertsCommand(o: AlertsOptions, now: Date = new Date()): { month: string } {
  if (o.month !== undefined && !/^\d{4}-(0[1-9]|1[0-2])$/.test(o.month)) {
    throw new UsageError(`--month "${o.month}" is not a month: use YYYY-MM, e.g. 2026-10.`);
  }
  return { month: `${o.month ?? now.toISOString().slice(0, 7)}-01` };
}

export async function alertsCommand(o: AlertsOptions, prepared: { month: string }, now: Date = new Date()): Promise<AlertsCommandResult> {
  const ctx = commandContext(o);
  const store = await openCommandStore(ctx, ctx.log, o.signal ? { signal: o.signal } : {});
  try {
    return await evaluateMonth(ctx, store, { month: prepared.month, now, ...(o.signal ? { signal: o.signal } : {}) });
  } finally {
    await store.close();
  }
}

/** JSON lines: one alert a line, as the webhook receives it. */
export function alertsJsonLines(r: AlertsCommandResult): string {
  return r.alerts.map((a) => JSON.stringify(alertPayload(a))).join('\n');
}

export function formatAlerts(r: AlertsCommandResult): string {
  const head = `Alerts of ${r.month.slice(0, 7)}: ${r.alerts.length} (${r.alerts.filter((a) => a.status === 'open').length} open); ` +
    `${r.fired} new, ${r.superseded} superseded this run`;
  const lines = r.alerts.map((a) => `  ${a.status === 'open' ? '!' : '-'} ${a.alert_id} ${a.status.padEnd(10)} ${a.message}`);
  return [head, ...lines].join('\n');
}

/** `--check`: one line saying whether an alert of the current month is open. */
export function checkLine(r: AlertsCommandResult): string {
  return r.openCurrent > 0 ? `ALERT: ${r.openCurrent} open alert(s) this month (usage-pipeline alerts lists them)` : 'OK: no open alert this month';
}

// `usage-pipeline alerts [--month YYYY-MM] [--json] [--check]`: evaluates the month's budgets and
// settled days not yet evaluated, delivers what the webhook has not taken, and lists the month's alerts.
// `usage-pipeline alerts --ack ID [--note TEXT] [--by NAME]`: acknowledges one alert, so that
// `--check` no longer fails on it.
import { userInfo } from 'node:os';
import { commandContext, openCommandStore, type CommonOptions } from '../app/context.js';
import { acknowledge, evaluateMonth, needsAttention, type AlertsCommandResult } from '../app/alerts.js';
import { alertPayload } from '../alerts/webhook.js';
import { UsageError } from '../domain/errors.js';
import type { AlertRecord } from '../store/alerts.js';

export interface AlertsOptions extends CommonOptions {
  month?: string;
  json?: boolean;
  check?: boolean;
  ack?: string;
  note?: string;
  by?: string;
  signal?: AbortSignal;
}

const ALERT_ID = /^al-[0-9a-f]{16}$/;
const MAX_TEXT = 500;

/** The month asked for (default: the current one, UTC), checked before anything is opened. */
export function prepareAlertsCommand(o: AlertsOptions, now: Date = new Date()): { month: string } {
  if (o.month !== undefined && !/^\d{4}-(0[1-9]|1[0-2])$/.test(o.month)) {
    throw new UsageError(`--month "${o.month}" is not a month: use YYYY-MM, e.g. 2026-10.`);
  }
  if (o.ack === undefined && (o.note !== undefined || o.by !== undefined))
    throw new UsageError('--note and --by go with --ack ID.');
  if (o.ack !== undefined) {
    if (o.check || o.month !== undefined)
      throw new UsageError('--ack acknowledges one alert: it does not go with --check or --month.');
    if (!ALERT_ID.test(o.ack))
      throw new UsageError(
        `--ack "${o.ack}" is not an alert id: use the id \`usage-pipeline alerts\` lists, e.g. al-0123456789abcdef.`,
      );
    for (const [flag, v] of [
      ['--note', o.note],
      ['--by', o.by],
    ] as const) {
      if (v !== undefined && (v.length > MAX_TEXT || v.trim() === ''))
        throw new UsageError(`${flag} takes 1 to ${MAX_TEXT} characters.`);
    }
  }
  return { month: `${o.month ?? now.toISOString().slice(0, 7)}-01` };
}

/** Who acknowledges: --by, else the operating-system user running the command. */
function acknowledger(o: AlertsOptions): string {
  if (o.by !== undefined) return o.by.trim();
  try {
    return userInfo().username || 'unknown';
  } catch {
    return 'unknown';
  }
}

export interface AckResult {
  alertId: string;
  alert: AlertRecord;
}

/** `--ack ID`: records the acknowledgement (an earlier one stands); an unknown id is a usage error. */
export async function alertsAckCommand(o: AlertsOptions & { ack: string }, now: Date = new Date()): Promise<AckResult> {
  const ctx = commandContext(o);
  const store = await openCommandStore(ctx, ctx.log, o.signal ? { signal: o.signal } : {});
  try {
    const alert = await acknowledge(store, { alertId: o.ack, by: acknowledger(o), note: o.note?.trim() ?? null, now });
    if (alert === null)
      throw new UsageError(
        `No alert has the id ${o.ack}: \`usage-pipeline alerts --month YYYY-MM\` lists a month's alerts.`,
      );
    return { alertId: o.ack, alert };
  } finally {
    await store.close();
  }
}

/** `--ack ID --json`: the acknowledgement that stands, as one JSON line. */
export function ackJson(r: AckResult): string {
  const a = r.alert;
  return JSON.stringify({
    alert_id: a.alert_id,
    status: a.status,
    acknowledged_at: a.acknowledged_at?.toISOString() ?? null,
    acknowledged_by: a.acknowledged_by ?? null,
    note: a.ack_note ?? null,
  });
}

export function formatAck(r: AckResult): string {
  const a = r.alert;
  const note = a.ack_note ? ` (${a.ack_note})` : '';
  return (
    `${a.alert_id} acknowledged by ${a.acknowledged_by ?? '?'} at ${a.acknowledged_at?.toISOString() ?? '?'}${note}: ${a.message}` +
    (a.status === 'open' ? '' : ` [${a.status}]`)
  );
}

export async function alertsCommand(
  o: AlertsOptions,
  prepared: { month: string },
  now: Date = new Date(),
): Promise<AlertsCommandResult> {
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
  const open = r.alerts.filter((a) => a.status === 'open');
  const head =
    `Alerts of ${r.month.slice(0, 7)}: ${r.alerts.length} (${open.length} open, ${open.filter((a) => !needsAttention(a)).length} of them acknowledged); ` +
    `${r.fired} new, ${r.superseded} superseded this run`;
  const state = (a: AlertsCommandResult['alerts'][number]) =>
    needsAttention(a) ? 'open' : a.status === 'open' ? 'acked' : a.status;
  const lines = r.alerts.map(
    (a) => `  ${needsAttention(a) ? '!' : '-'} ${a.alert_id} ${state(a).padEnd(10)} ${a.message}`,
  );
  return [head, ...lines].join('\n');
}

/** `--check`: one line saying whether an alert of the current month is open and not acknowledged. */
export function checkLine(r: AlertsCommandResult): string {
  return r.openCurrent > 0
    ? `ALERT: ${r.openCurrent} open alert(s) not acknowledged this month (usage-pipeline alerts lists them; alerts --ack ID acknowledges one)`
    : 'OK: no open alert this month that is not acknowledged';
}

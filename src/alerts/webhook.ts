// Delivers open alerts to the configured webhook: one JSON POST per alert with its id as the
// Idempotency-Key, retried a bounded number of times on a 5xx answer or a network error, each attempt
// recorded (alert_deliveries). An alert delivered once is never sent again; one that failed is tried
// again on the next run. A failure is reported, never thrown: it must not fail a collection.
import { setTimeout as delay } from 'node:timers/promises';
import { request } from 'undici';
import type { Logger } from '../log.js';
import { type AlertRecord } from '../store/alerts.js';
import type { Store } from '../store/store.js';
import { CATEGORIES } from './rules.js';

export interface WebhookSettings {
  url: string;
  timeoutMs: number;
  maxAttempts: number;
  /** Wait before the n-th retry: backoffMs x 2^(n-1). */
  backoffMs?: number;
}

export interface DeliveryOutcome {
  delivered: number;
  failed: number;
}

/** The JSON body of one alert: its stored columns, its contributions grouped, its detail parsed. */
export function alertPayload(a: AlertRecord): Record<string, unknown> {
  const contributions = a.kind === 'anomaly' ? Object.fromEntries(CATEGORIES.map((c) => [c, a[`${c}_usd`]])) : null;
  const { detail, identity: _identity, fired_at, superseded_at, acknowledged_at, ...rest } = a;
  for (const c of CATEGORIES) delete (rest as Record<string, unknown>)[`${c}_usd`];
  return {
    ...rest,
    fired_at: fired_at.toISOString(),
    superseded_at: superseded_at?.toISOString() ?? null,
    ...(acknowledged_at !== undefined ? { acknowledged_at: acknowledged_at?.toISOString() ?? null } : {}),
    contributions,
    detail: JSON.parse(detail) as unknown,
  };
}

async function post(
  s: WebhookSettings,
  a: AlertRecord,
  signal?: AbortSignal,
): Promise<{ status: number | null; error: string | null }> {
  try {
    const res = await request(s.url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'idempotency-key': a.alert_id,
        'user-agent': 'usage-pipeline-alerts',
      },
      body: JSON.stringify(alertPayload(a)),
      headersTimeout: s.timeoutMs,
      bodyTimeout: s.timeoutMs,
      ...(signal ? { signal } : {}),
    });
    await res.body.dump();
    return {
      status: res.statusCode,
      error: res.statusCode >= 200 && res.statusCode < 300 ? null : `answered ${res.statusCode}`,
    };
  } catch (err) {
    return { status: null, error: (err as Error).message.split('\n')[0] ?? 'network error' };
  }
}

/** Sends every open alert not yet delivered, oldest first. */
export async function deliverAlerts(
  store: Store,
  s: WebhookSettings,
  o: { log: Logger; signal?: AbortSignal; now?: () => Date },
): Promise<DeliveryOutcome> {
  const target = new URL(s.url).origin;
  const pending = await store.alerts.undeliveredAlerts();
  if (pending.length === 0) return { delivered: 0, failed: 0 };
  const byId = new Map((await store.alerts.listAlerts()).map((a) => [a.alert_id, a]));
  const out: DeliveryOutcome = { delivered: 0, failed: 0 };
  for (const p of pending) {
    const alert = byId.get(p.alert_id);
    if (!alert || o.signal?.aborted) break;
    let attempt = p.attempts;
    let done = false;
    for (let n = 0; n < s.maxAttempts && !done; n++) {
      if (n > 0)
        await delay((s.backoffMs ?? 500) * 2 ** (n - 1), undefined, o.signal ? { signal: o.signal } : undefined).catch(
          () => {
            // a stop ends the wait early; the signal is checked just below
          },
        );
      if (o.signal?.aborted || (await store.alerts.wasDelivered(alert.alert_id))) break;
      const r = await post(s, alert, o.signal);
      attempt++;
      const ok = r.error === null;
      await store.alerts.recordDelivery({
        alertId: alert.alert_id,
        attempt,
        attemptedAt: (o.now ?? (() => new Date()))(),
        target,
        httpStatus: r.status,
        outcome: ok ? 'delivered' : 'failed',
        error: r.error,
      });
      done = ok;
      // Only a 5xx or a network error is worth another try now; a 4xx waits for the next run.
      if (!ok && r.status !== null && r.status < 500) break;
    }
    if (done) out.delivered++;
    else {
      out.failed++;
      o.log.warn(
        `alert ${alert.alert_id}: the webhook at ${target} did not take it; it is tried again on the next run`,
      );
    }
  }
  return out;
}

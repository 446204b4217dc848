// Alerts against real parts: the sandbox's spending limits read over HTTP after a collection (403 and
// 404 mean no organization budget), a webhook on a real local server (retried on 500, never called twice
// for an alert once it took it), and a plain-http webhook beyond loopback refused before any request.
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterEach, describe, expect, test } from 'vitest';
import { collectOnce } from '../../src/app/collect.js';
import { commandContext } from '../../src/app/context.js';
import { alertId } from '../../src/alerts/evaluate.js';
import { deliverAlerts } from '../../src/alerts/webhook.js';
import { silentLogger } from '../../src/log.js';
import { labelledEvents } from '../../src/sandbox/truth.js';
import { type AlertRecord } from '../../src/store/alerts.js';
import { rawSql } from '../../src/store/rawSql.js';
import { openStore, type Store } from '../../src/store/store.js';
import { cli, errorMessage } from '../support/cli.js';
import { fixture, useTeardown } from '../support/fixture.js';
import { tempDir } from '../support/store.js';

function alert(n: number): AlertRecord {
  const identity = `budget_actual|program|p-${n}|2026-11-01|50`;
  return {
    alert_id: alertId(identity),
    identity,
    kind: 'budget_actual',
    rule: 'budget-threshold',
    rule_version: 1,
    month: '2026-11-01',
    scope_kind: 'program',
    scope_id: `p-${n}`,
    threshold_pct: 50,
    day: '2026-11-09',
    org_id: null,
    org_name: null,
    program_id: `p-${n}`,
    program_name: null,
    budget_usd: '100.00',
    threshold_usd: '50.00',
    expected_usd: null,
    actual_usd: '51.00',
    impact_usd: null,
    impact_pct: null,
    score: null,
    crossing_date: null,
    compute_usd: null,
    storage_usd: null,
    instant_restore_usd: null,
    snapshots_usd: null,
    transfer_usd: null,
    extra_branches_usd: null,
    other_usd: null,
    message: `Budget ACTUAL: p-${n}`,
    detail: '{}',
    status: 'open',
    fired_at: new Date('2026-11-10T00:00:00Z'),
    superseded_at: null,
    superseded_reason: null,
  };
}

/** A webhook on 127.0.0.1 answering from `statuses` in turn (the last one repeats). */
async function hook(
  statuses: number[],
): Promise<{ url: string; seen: { key: string; body: Record<string, unknown> }[]; server: Server }> {
  const seen: { key: string; body: Record<string, unknown> }[] = [];
  const server = createServer((req: IncomingMessage, res) => {
    let text = '';
    req.on('data', (d) => (text += d));
    req.on('end', () => {
      seen.push({ key: String(req.headers['idempotency-key']), body: JSON.parse(text) as Record<string, unknown> });
      res.statusCode = statuses[Math.min(seen.length - 1, statuses.length - 1)]!;
      res.end();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`, seen, server };
}

describe('alert delivery and the spending limit, over real HTTP', () => {
  const own = useTeardown();
  let store: Store | undefined;
  let dir: ReturnType<typeof tempDir> | undefined;
  let server: Server | undefined;
  afterEach(async () => {
    await store?.close();
    dir?.cleanup();
    await new Promise((r) => (server ? server.close(r) : r(null)));
    store = undefined;
    server = undefined;
  });

  test('the webhook is retried on 500, then never called again for an alert it took', async () => {
    dir = tempDir('alerts-hook-');
    store = await openStore({ path: join(dir.dir, 'usage.duckdb') });
    await store.alerts.insertNewAlerts([alert(1)]);
    const h = await hook([500, 200]);
    server = h.server;
    const settings = { url: h.url, timeoutMs: 5000, maxAttempts: 3, backoffMs: 1 };
    expect(await deliverAlerts(store, settings, { log: silentLogger })).toEqual({ delivered: 1, failed: 0 });
    expect(h.seen.map((s) => s.key)).toEqual([alert(1).alert_id, alert(1).alert_id]);
    expect(h.seen[1]!.body).toMatchObject({
      alert_id: alert(1).alert_id,
      kind: 'budget_actual',
      threshold_pct: 50,
      actual_usd: '51.00',
    });
    // Another run, and a new alert: only the new one is sent.
    await store.alerts.insertNewAlerts([alert(2)]);
    expect(await deliverAlerts(store, settings, { log: silentLogger })).toEqual({ delivered: 1, failed: 0 });
    expect(await deliverAlerts(store, settings, { log: silentLogger })).toEqual({ delivered: 0, failed: 0 });
    expect(h.seen.map((s) => s.key)).toEqual([alert(1).alert_id, alert(1).alert_id, alert(2).alert_id]);
    const rows = await rawSql(store).query<{
      alert_id: string;
      attempt: number;
      http_status: number;
      outcome: string;
      target: string;
    }>('SELECT alert_id, attempt, http_status, outcome, target FROM alert_deliveries ORDER BY alert_id, attempt');
    expect(
      rows.filter((r) => r.alert_id === alert(1).alert_id).map((r) => [r.attempt, r.http_status, r.outcome]),
    ).toEqual([
      [1, 500, 'failed'],
      [2, 200, 'delivered'],
    ]);
    expect(rows.every((r) => !r.target.includes('/hook'))).toBe(true); // the origin only
  });

  test('a webhook that keeps failing is tried a bounded number of times, and again on the next run', async () => {
    dir = tempDir('alerts-hook-');
    store = await openStore({ path: join(dir.dir, 'usage.duckdb') });
    await store.alerts.insertNewAlerts([alert(3)]);
    const h = await hook([503, 503, 503, 200]);
    server = h.server;
    const settings = { url: h.url, timeoutMs: 5000, maxAttempts: 3, backoffMs: 1 };
    expect(await deliverAlerts(store, settings, { log: silentLogger })).toEqual({ delivered: 0, failed: 1 });
    expect(h.seen).toHaveLength(3);
    expect(await deliverAlerts(store, settings, { log: silentLogger })).toEqual({ delivered: 1, failed: 0 });
    expect(await deliverAlerts(store, settings, { log: silentLogger })).toEqual({ delivered: 0, failed: 0 });
    expect(h.seen).toHaveLength(4);
  });

  test("a collection reads each organization's spending limit: a limit in cents, and none on 403 or 404", async () => {
    const fx = own(await fixture({ fast: true, events: true }));
    const ctx = commandContext(fx.common);
    const r = await collectOnce(ctx, { granularities: ['daily'] });
    expect(r.status).toBe('complete');
    expect(r.alerts).not.toBeNull();
    const s = await openStore({ path: fx.dbPath });
    try {
      const rows = await rawSql(s).query<{ org_id: string; limit_cents: bigint | null; answer: string }>(
        'SELECT org_id, limit_cents, answer FROM org_spending_limits ORDER BY org_id',
      );
      const truth = labelledEvents(fx.sb.world).spending_limits.filter((l) =>
        fx.sb.world.personal_org_ids.includes(l.org_id),
      );
      expect(rows.map((x) => [x.org_id, x.limit_cents, x.answer])).toEqual(
        truth
          .sort((a, b) => (a.org_id < b.org_id ? -1 : 1))
          .map((l) => [
            l.org_id,
            l.cents === null ? null : BigInt(l.cents),
            l.status === 200 ? 'limit' : `none (${l.status})`,
          ]),
      );
      expect(rows.some((x) => x.answer === 'limit')).toBe(true);
      expect(rows.some((x) => x.answer === 'none (403)') || rows.some((x) => x.answer === 'none (404)')).toBe(true);
    } finally {
      await s.close();
    }
  });

  test('a plain-http webhook beyond loopback is a configuration error: exit 64 before any request', async () => {
    const fx = own(await fixture({ fast: true }, '[alerts]\nwebhook_url = "http://hooks.example.com/usage"'));
    fx.sb.resetStats();
    const r = await cli(['collect', '--config', fx.configPath], { env: fx.env, cwd: fx.dir });
    expect(r.code).toBe(64);
    expect(errorMessage(r.stderr)).toMatch(/alerts\.webhook_url/);
    expect(errorMessage(r.stderr)).toMatch(/https/);
    expect(fx.sb.stats().total).toBe(0);
  });
});

// Acknowledging alerts through the built command line: `alerts --check` exits 1 while an alert of the
// current month is open and not acknowledged, and 0 once each is; `alerts --ack ID` records who, when and
// why in the database, once; an unknown or malformed id is bad input.
import { userInfo } from 'node:os';
import { describe, expect, test } from 'vitest';
import { alertId } from '../../src/alerts/evaluate.js';
import { type AlertRecord } from '../../src/store/alerts.js';
import { rawSql } from '../../src/store/rawSql.js';
import { openStore } from '../../src/store/store.js';
import { cli } from '../support/cli.js';
import { fixture, useTeardown } from '../support/fixture.js';

// The command evaluates the real current month: the alerts are of it, on a day not yet settled (no
// daily coverage is stored), so the evaluation neither supersedes them nor fires others.
const MONTH = `${new Date().toISOString().slice(0, 7)}-01`;
const DAY = `${MONTH.slice(0, 8)}02`;

function anomaly(program: string, status: 'open' | 'superseded'): AlertRecord {
  const identity = `anomaly|program|${program}|${MONTH}|${DAY}`;
  return {
    alert_id: alertId(identity),
    identity,
    kind: 'anomaly',
    rule: 'anomaly-mad',
    rule_version: 1,
    month: MONTH,
    scope_kind: 'program',
    scope_id: program,
    threshold_pct: null,
    day: DAY,
    org_id: null,
    org_name: null,
    program_id: program,
    program_name: null,
    budget_usd: null,
    threshold_usd: null,
    expected_usd: '20.00',
    actual_usd: '80.00',
    impact_usd: '60.00',
    impact_pct: '300.00',
    score: 12,
    crossing_date: null,
    compute_usd: '60.00',
    storage_usd: '0.00',
    instant_restore_usd: '0.00',
    snapshots_usd: '0.00',
    transfer_usd: '0.00',
    extra_branches_usd: '0.00',
    other_usd: '0.00',
    message: `Anomaly: ${program}`,
    detail: '{}',
    status,
    fired_at: new Date(),
    superseded_at: status === 'open' ? null : new Date(),
    superseded_reason: status === 'open' ? null : 'restated',
  };
}

describe('alerts --ack', () => {
  const own = useTeardown();

  test('--check fails while an alert of the month is open and not acknowledged; --ack records who, when and why, once', async () => {
    const fx = own(await fixture({ fast: true }));
    const [a, b, gone] = [anomaly('p-a', 'open'), anomaly('p-b', 'open'), anomaly('p-c', 'superseded')];
    const store = await openStore({ path: fx.dbPath });
    await store.alerts.insertNewAlerts([a, b, gone]);
    await store.close();
    const run = (...args: string[]) =>
      cli(['alerts', ...args, '--config', fx.configPath], { env: fx.env, cwd: fx.dir });

    let r = await run('--check');
    expect([r.code, r.stdout.trim()]).toEqual([1, expect.stringMatching(/^ALERT: 2 open alert\(s\) not acknowledged/)]);

    r = await run('--ack', a.alert_id, '--note', 'known: a load test', '--by', 'ops-oncall');
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(
      new RegExp(`^${a.alert_id} acknowledged by ops-oncall at \\d{4}-.*\\(known: a load test\\): Anomaly: p-a`),
    );
    r = await run('--check');
    expect([r.code, r.stdout.trim()]).toEqual([1, expect.stringMatching(/^ALERT: 1 open alert\(s\)/)]);

    expect((await run('--ack', b.alert_id, '--json')).code).toBe(0);
    r = await run('--check');
    expect([r.code, r.stdout.trim()]).toEqual([0, 'OK: no open alert this month that is not acknowledged']);

    // A second acknowledgement keeps the first; the alerts themselves are unchanged.
    r = await run('--ack', a.alert_id, '--note', 'another note', '--by', 'someone-else');
    expect(r.stdout).toContain('acknowledged by ops-oncall');
    const check = await openStore({ path: fx.dbPath, readOnly: true });
    try {
      const acks = await rawSql(check).query<{
        alert_id: string;
        acknowledged_by: string;
        note: string | null;
        acknowledged_at: Date;
      }>('SELECT alert_id, acknowledged_by, note, acknowledged_at FROM alert_acks ORDER BY acknowledged_at, alert_id');
      expect(acks.map((x) => [x.alert_id, x.acknowledged_by, x.note])).toEqual([
        [a.alert_id, 'ops-oncall', 'known: a load test'],
        [b.alert_id, userInfo().username, null],
      ]);
      expect(Math.abs(acks[0]!.acknowledged_at.getTime() - Date.now())).toBeLessThan(10 * 60_000);
      const status = await rawSql(check).query<{ status: string }>('SELECT status FROM alerts ORDER BY scope_id');
      expect(status.map((x) => x.status)).toEqual(['open', 'open', 'superseded']);
    } finally {
      await check.close();
    }

    // The listing shows the acknowledgement (JSON lines off a terminal).
    const listed = (await run('--json')).stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(listed.find((x) => x.alert_id === a.alert_id)).toMatchObject({
      status: 'open',
      acknowledged_by: 'ops-oncall',
      ack_note: 'known: a load test',
    });
    expect(listed.find((x) => x.alert_id === gone.alert_id)).toMatchObject({
      status: 'superseded',
      acknowledged_at: null,
    });

    // A new alert of the month makes --check fail again.
    const again = await openStore({ path: fx.dbPath });
    await again.alerts.insertNewAlerts([anomaly('p-d', 'open')]);
    await again.close();
    expect((await run('--check')).code).toBe(1);
  }, 180_000);

  test('an unknown or malformed id, or --note without --ack, is bad input', async () => {
    const fx = own(await fixture({ fast: true }));
    const run = (...args: string[]) =>
      cli(['alerts', ...args, '--config', fx.configPath], { env: fx.env, cwd: fx.dir });
    let r = await run('--ack', 'al-0123456789abcdef');
    expect([r.code, r.stderr]).toEqual([64, expect.stringContaining('No alert has the id al-0123456789abcdef')]);
    r = await run('--ack', 'p-a');
    expect([r.code, r.stderr]).toEqual([64, expect.stringContaining('is not an alert id')]);
    r = await run('--note', 'why');
    expect([r.code, r.stderr]).toEqual([64, expect.stringContaining('--note and --by go with --ack')]);
  }, 120_000);
});

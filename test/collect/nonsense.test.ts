// An API that answers nonsense: a clear message naming the request, a non-zero exit, nothing half-written.
import { createServer, type Server } from 'node:http';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { collectCommand } from '../../src/cli/collect.js';
import { silentLogger } from '../../src/log.js';
import { openStore } from '../../src/store/store.js';
import { rawSql } from '../../src/store/rawSql.js';

const NOW = Date.parse('2026-11-21T10:37:00Z');
const bucket = (value: unknown) => ({
  timeframe_start: '2026-11-20T00:00:00Z',
  timeframe_end: '2026-11-21T00:00:00Z',
  metrics: [{ metric_name: 'compute_unit_seconds', value }],
});
const program = (id: string, value: unknown) => ({
  program_id: id,
  periods: [{ period_id: 'pd-1', period_plan: 'launch', period_start: '2026-11-01T00:00:00Z', consumption: [bucket(value)] }],
});

/** A stand-in API whose v2 programs page carries `value` for one program's metric. */
function fakeApi(value: unknown): Promise<Server> {
  const server = createServer((req, res) => {
    const url = new URL(req.url!, 'http://x');
    res.setHeader('content-type', 'application/json');
    if (url.pathname === '/v1/users/me/organizations') return res.end(JSON.stringify({ organizations: [{ id: 'org-a' }] }));
    if (url.pathname === '/v1/consumption_history/v2/programs' && url.searchParams.get('granularity') === 'daily') {
      return res.end(JSON.stringify({ programs: [program('p-good', 7200), program('p-bad', value)] }));
    }
    if (url.pathname === '/v1/consumption_history/v2/frameworks') return res.end(JSON.stringify({ frameworks: [] }));
    res.statusCode = 403;
    res.end(JSON.stringify({ request_id: 'req-403', code: 'forbidden', message: 'not for this plan' }));
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

describe('an API that answers nonsense', () => {
  let server: Server;
  beforeAll(async () => {
    server = await fakeApi('lots');
  });
  afterAll(() => new Promise<void>((r) => server.close(() => r())));

  it('fails that scope with a message naming the request, exits non-zero, and writes none of it', async () => {
    const db = join(mkdtempSync(join(tmpdir(), 'usage-nonsense-')), 'usage.duckdb');
    const r = await collectCommand({
      db,
      env: { USAGE_API_KEY: 'test-key' },
      baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
      granularity: 'daily',
      sources: 'v2_programs',
      inventory: 'never',
      now: () => NOW,
      log: silentLogger,
    });
    expect(r.exitCode).not.toBe(0);
    const failed = r.scopes.find((s) => s.source === 'v2_programs' && s.status === 'failed');
    expect(failed?.detail).toMatch(/not the documented v2_programs page \(request id [\w-]+\): a "value" is missing or not of the documented type/);
    const store = await openStore({ path: db, readOnly: true });
    try {
      expect(await rawSql(store).query('SELECT * FROM usage_program')).toEqual([]);
      const [cov] = await rawSql(store).query<{ status: string }>("SELECT status FROM coverage WHERE source = 'v2_programs'");
      expect(cov?.status).toBe('failed');
    } finally {
      await store.close();
    }
  });
});

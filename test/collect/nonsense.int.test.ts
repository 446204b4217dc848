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
  periods: [
    { period_id: 'pd-1', period_plan: 'launch', period_start: '2026-11-01T00:00:00Z', consumption: [bucket(value)] },
  ],
});

const goodPage = () => JSON.stringify({ programs: [program('p-good', 7200), program('p-bad', 60)] });
/** The daily v2 programs page the stand-in API answers: `value` for one program's metric, or any bytes. */
let programsPage: () => Buffer | string;

/** A stand-in API whose v2 programs page carries `value` for one program's metric. */
function fakeApi(value: unknown): Promise<Server> {
  programsPage = () => JSON.stringify({ programs: [program('p-good', 7200), program('p-bad', value)] });
  const server = createServer((req, res) => {
    const url = new URL(req.url!, 'http://x');
    res.setHeader('content-type', 'application/json');
    if (url.pathname === '/v1/users/me/organizations')
      return res.end(JSON.stringify({ organizations: [{ id: 'org-a' }] }));
    if (url.pathname === '/v1/consumption_history/v2/programs' && url.searchParams.get('granularity') === 'daily') {
      return res.end(programsPage());
    }
    if (url.pathname === '/v1/consumption_history/v2/frameworks') return res.end(JSON.stringify({ frameworks: [] }));
    res.statusCode = 403;
    res.end(JSON.stringify({ request_id: 'req-403', code: 'forbidden', message: 'not for this plan' }));
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

let server: Server;

describe('an API that answers nonsense', () => {
  beforeAll(async () => {
    server = await fakeApi('lots');
  });
  afterAll(() => new Promise<void>((r) => server.close(() => r())));

  it('fails that scope with a message naming the request, exits non-zero, and writes none of it', async () => {
    const { r, db } = await collect();
    expect(r.exitCode).not.toBe(0);
    const failed = r.scopes.find((s) => s.source === 'v2_programs' && s.status === 'failed');
    expect(failed?.detail).toMatch(
      /not the documented v2_programs page \(request id [\w-]+\): a "value" is missing or not of the documented type/,
    );
    await expectNothingStored(db);
  });

  // One page reader on every path: the bytes of a page the fast scan reads, of one JSON.parse reads (an
  // escape in an id), and of one lossless-json reads (a 16-digit number) obey the same rules.
  const paths: [string, (page: string) => string][] = [
    ['the scan', (page) => page],
    ['JSON.parse', (page) => page.replace('"p-good"', '"p-\\u0067ood"')],
    ['lossless-json', (page) => page.replace('"value":7200', '"value":1234567890123456')],
  ];
  const broken: [string, (page: string) => Buffer | string, RegExp][] = [
    [
      'a plan that is not UTF-8',
      (page) => withBytes(page, '"launch"', Buffer.from([0x22, 0x6c, 0xe1, 0x80, 0x22])),
      /\$\.programs\[0\]\.periods\[0\]\.period_plan: not valid UTF-8 at byte \d+/,
    ],
    [
      'an unknown member that is not UTF-8',
      (page) => withBytes(page, '"launch"', Buffer.from('"launch","note":"\xff"', 'latin1')),
      /\$\.programs\[0\]\.periods\[0\]\.note: not valid UTF-8/,
    ],
    [
      '31 November',
      (page) => page.replace('"2026-11-20T00:00:00Z"', '"2026-11-31T00:00:00Z"'),
      /consumption\[0\]\.timeframe_start: expected an ISO 8601 date-time with a zone naming a real instant/,
    ],
    [
      '"value" twice',
      (page) => page.replace('"value":60', '"value":60,"value":60'),
      /programs\[1\]\.periods\[0\]\.consumption\[0\]\.metrics\[0\]\.value: the key "value" is given twice/,
    ],
    [
      '-0',
      (page) => page.replace('"value":60', '"value":-0'),
      /programs\[1\]\.periods\[0\]\.consumption\[0\]\.metrics\[0\]\.value: expected a non-negative integer, got -0/,
    ],
  ];
  for (const [path, via] of paths) {
    it(`refuses, read by ${path}: ${broken.map((b) => b[0]).join('; ')}; the scope fails naming the request and the path, nothing stored`, async () => {
      programsPage = () => via(goodPage());
      const ok = await collect();
      expect(ok.r.exitCode).toBe(0); // the page as such is read on this path
      for (const [, breakIt, message] of broken) {
        programsPage = () => breakIt(via(goodPage()));
        const { r, db } = await collect();
        expect(r.exitCode).not.toBe(0);
        const failed = r.scopes.find((s) => s.source === 'v2_programs' && s.status === 'failed');
        expect(failed?.detail).toMatch(/not the documented v2_programs page \(request id [\w-]+\)/);
        expect(failed?.detail).toMatch(message);
        await expectNothingStored(db);
      }
    });
  }
});

/** `page` with the first `text` replaced by raw bytes. */
function withBytes(page: string, text: string, bytes: Buffer): Buffer {
  const at = page.indexOf(text);
  expect(at).toBeGreaterThan(0);
  return Buffer.concat([Buffer.from(page.slice(0, at)), bytes, Buffer.from(page.slice(at + text.length))]);
}

async function expectNothingStored(db: string): Promise<void> {
  const store = await openStore({ path: db, readOnly: true });
  try {
    expect(await rawSql(store).query('SELECT * FROM usage_program')).toEqual([]);
    const [cov] = await rawSql(store).query<{ status: string }>(
      "SELECT status FROM coverage WHERE source = 'v2_programs'",
    );
    expect(cov?.status).toBe('failed');
  } finally {
    await store.close();
  }
}

async function collect() {
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
  return { r, db };
}

// A small stand-in for the management API that answers as a hostile or broken server would: values that
// are not integers, cursors that never end, empty lists over existing data, endless bodies, a Retry-After
// of a day. Its good answer is a plain, valid v2 programs page, so a test can first store data and then
// check that a hostile answer changes none of it.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export type Behaviour =
  | { kind: 'good' }
  /** One metric value written as this raw JSON literal ("\"abc\"", "1.5", "9223372036854775808", ...). */
  | { kind: 'value'; literal: string }
  /** Every page full, with a cursor never seen before. */
  | { kind: 'endless-cursor' }
  /** The same full page every time, under a cursor never seen before (a cursor that runs away). */
  | { kind: 'same-page' }
  | { kind: 'empty' }
  /** 403 on every route, as for an organization on the Free plan (not eligible for either version). */
  | { kind: 'not-eligible' }
  /** 200, then body bytes forever. */
  | { kind: 'endless-body' }
  | { kind: 'retry-after'; seconds: number };

export const HOSTILE_ORG = 'org-hostile';
export const HOSTILE_KEY = 'hostile-test-key';
const PROGRAMS = ['prog-a', 'prog-b'];
const DAY = 86_400_000;

export interface HostileServer {
  baseUrl: string;
  /** Requests received so far, by path. */
  readonly requests: string[];
  /** Resolves at the next request received. */
  nextRequest(): Promise<void>;
  set(b: Behaviour): void;
  close(): Promise<void>;
}

/** One bucket per day from `from`, three days, with fixed values; `literal` replaces the last one. */
function programsPage(from: number, ids: string[], cursor: string | undefined, literal?: string): string {
  const items = ids.map((id, i) => ({
    program_id: id,
    periods: [
      {
        period_id: `pd-${id}`,
        period_plan: 'launch',
        period_start: new Date(from - 30 * DAY).toISOString(),
        consumption: [0, 1, 2].map((d) => ({
          timeframe_start: new Date(from + d * DAY).toISOString(),
          timeframe_end: new Date(from + (d + 1) * DAY).toISOString(),
          metrics: [
            { metric_name: 'compute_unit_seconds', value: 3600 * (i + 1) + d },
            { metric_name: 'public_network_transfer_bytes', value: '__LAST__' },
          ],
        })),
      },
    ],
  }));
  let json = JSON.stringify({ programs: items, ...(cursor ? { pagination: { cursor } } : {}) });
  let n = 0;
  const total = ids.length * 3;
  json = json.replace(/"__LAST__"/g, () => (++n === total && literal !== undefined ? literal : String(1_000_000 + n)));
  return json;
}

export async function startHostileServer(): Promise<HostileServer> {
  let behaviour: Behaviour = { kind: 'good' };
  const requests: string[] = [];
  let waiters: (() => void)[] = [];
  let serial = 0;

  const handle = (req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    requests.push(url.pathname);
    const w = waiters;
    waiters = [];
    for (const r of w) r();
    res.setHeader('x-request-id', `hostile-${++serial}`);
    if (req.headers.authorization !== `Bearer ${HOSTILE_KEY}`) {
      res.writeHead(401, { 'content-type': 'application/json' });
      return res.end(JSON.stringify({ request_id: `hostile-${serial}`, code: '', message: 'bad key' }));
    }
    if (url.pathname !== '/v1/consumption_history/v2/programs' || behaviour.kind === 'not-eligible') {
      res.writeHead(403, { 'content-type': 'application/json' });
      return res.end(
        JSON.stringify({ request_id: `hostile-${serial}`, code: 'forbidden', message: 'not served here' }),
      );
    }
    const from = Date.parse(url.searchParams.get('from') ?? '');
    const b = behaviour;
    if (b.kind === 'retry-after') {
      res.writeHead(429, { 'content-type': 'application/json', 'retry-after': String(b.seconds) });
      return res.end(JSON.stringify({ request_id: `hostile-${serial}`, code: '', message: 'slow down' }));
    }
    if (b.kind === 'endless-body') {
      res.writeHead(200, { 'content-type': 'application/json' });
      const chunk = Buffer.alloc(64 * 1024, 0x20);
      res.write('{"programs":[');
      const pump = () => {
        while (!res.destroyed && res.write(chunk));
        if (!res.destroyed) res.once('drain', pump);
      };
      res.on('close', () => res.removeAllListeners('drain'));
      return pump();
    }
    res.writeHead(200, { 'content-type': 'application/json' });
    if (b.kind === 'empty') return res.end('{"programs":[]}');
    if (b.kind === 'endless-cursor') {
      const page = Number(url.searchParams.get('cursor')?.split('-')[1] ?? 0) + 1;
      const ids = Array.from({ length: Number(url.searchParams.get('limit') ?? 100) }, (_, i) => `ghost-${page}-${i}`);
      return res.end(programsPage(from, ids, `ghost-${page}-99`));
    }
    if (b.kind === 'same-page') {
      const ids = Array.from({ length: Number(url.searchParams.get('limit') ?? 100) }, (_, i) => `again-${i}`);
      return res.end(programsPage(from, ids, `again-${serial}`));
    }
    return res.end(programsPage(from, PROGRAMS, undefined, b.kind === 'value' ? b.literal : undefined));
  };

  const server: Server = createServer(handle);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    requests,
    nextRequest: () => new Promise<void>((resolve) => waiters.push(resolve)),
    set: (b) => {
      behaviour = b;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

// Test helper: headless Chromium (Debian's `chromium` package) driven over the DevTools protocol with
// undici's WebSocket: open a file, collect console errors, exceptions and network requests, evaluate,
// screenshot and print. No skipping: a missing browser is a failure that names the install command.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { WebSocket } from 'undici';

export const CHROMIUM_INSTALL = 'apt-get update && apt-get install -y chromium';
const START_TIMEOUT_MS = 20_000;
const CALL_TIMEOUT_MS = 20_000;

export function findChromium(): string {
  for (const name of ['chromium', 'chromium-browser']) {
    try {
      const p = execFileSync('sh', ['-c', `command -v ${name}`], { encoding: 'utf8' }).trim();
      if (p) return p;
    } catch {
      // try the next name
    }
  }
  throw new Error(`Chromium is not installed (needed to render report.html): run \`${CHROMIUM_INSTALL}\``);
}

export interface PageEvents {
  consoleErrors: string[];
  exceptions: string[];
  requests: string[];
}

export class Browser {
  private nextId = 1;
  private readonly pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  private readonly listeners: ((method: string, params: Record<string, unknown>, sessionId?: string) => void)[] = [];

  private constructor(
    private readonly proc: ChildProcess,
    private readonly ws: WebSocket,
    private readonly profile: string,
  ) {
    ws.addEventListener('message', (ev) => {
      const msg = JSON.parse(String(ev.data)) as {
        id?: number;
        result?: unknown;
        error?: { message: string };
        method?: string;
        params?: Record<string, unknown>;
        sessionId?: string;
      };
      if (msg.id !== undefined) {
        const p = this.pending.get(msg.id);
        this.pending.delete(msg.id);
        if (msg.error) p?.reject(new Error(msg.error.message));
        else p?.resolve(msg.result);
      } else if (msg.method) {
        for (const l of this.listeners) l(msg.method, msg.params ?? {}, msg.sessionId);
      }
    });
  }

  static async launch(): Promise<Browser> {
    const bin = findChromium();
    const profile = mkdtempSync(join(tmpdir(), 'chromium-profile-'));
    const proc = spawn(
      bin,
      [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
        '--no-first-run',
        '--disable-dev-shm-usage',
        `--user-data-dir=${profile}`,
        '--remote-debugging-port=0',
        'about:blank',
      ],
      { stdio: ['ignore', 'ignore', 'pipe'] },
    );
    const url = await new Promise<string>((resolve, reject) => {
      let err = '';
      const timer = setTimeout(
        () => reject(new Error(`Chromium did not start within ${START_TIMEOUT_MS} ms: ${err.slice(-2000)}`)),
        START_TIMEOUT_MS,
      );
      proc.stderr.on('data', (d: Buffer) => {
        err += d.toString();
        const m = /DevTools listening on (ws:\/\/\S+)/.exec(err);
        if (m) {
          clearTimeout(timer);
          resolve(m[1]!);
        }
      });
      proc.on('exit', (code) => {
        clearTimeout(timer);
        reject(new Error(`Chromium exited (${code}) before listening: ${err.slice(-2000)}`));
      });
    });
    const ws = new WebSocket(url);
    await new Promise<void>((resolve, reject) => {
      ws.addEventListener('open', () => resolve());
      ws.addEventListener('error', () => reject(new Error(`cannot connect to ${url}`)));
    });
    return new Browser(proc, ws, profile);
  }

  send<T = Record<string, unknown>>(
    method: string,
    params: Record<string, unknown> = {},
    sessionId?: string,
  ): Promise<T> {
    const id = this.nextId++;
    this.ws.send(JSON.stringify({ id, method, params, ...(sessionId ? { sessionId } : {}) }));
    return new Promise<T>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`${method} timed out`)), CALL_TIMEOUT_MS);
      this.pending.set(id, {
        resolve: (v) => {
          clearTimeout(timer);
          resolve(v as T);
        },
        reject: (e) => {
          clearTimeout(timer);
          reject(e);
        },
      });
    });
  }

  /** Opens a page, navigates to url and waits for its load event; events are recorded from the start. */
  async open(url: string, viewport = { width: 1200, height: 900 }): Promise<{ sessionId: string; events: PageEvents }> {
    const { targetId } = await this.send<{ targetId: string }>('Target.createTarget', { url: 'about:blank' });
    const { sessionId } = await this.send<{ sessionId: string }>('Target.attachToTarget', { targetId, flatten: true });
    const events: PageEvents = { consoleErrors: [], exceptions: [], requests: [] };
    let loaded!: () => void;
    const load = new Promise<void>((r) => (loaded = r));
    this.listeners.push((method, params, sid) => {
      if (sid !== sessionId) return;
      if (method === 'Runtime.consoleAPICalled' && (params.type === 'error' || params.type === 'assert'))
        events.consoleErrors.push(JSON.stringify(params.args));
      if (method === 'Runtime.exceptionThrown') events.exceptions.push(JSON.stringify(params.exceptionDetails));
      if (method === 'Log.entryAdded' && (params.entry as { level: string }).level === 'error')
        events.consoleErrors.push(JSON.stringify(params.entry));
      if (method === 'Network.requestWillBeSent') events.requests.push((params.request as { url: string }).url);
      if (method === 'Page.loadEventFired') loaded();
    });
    for (const m of ['Runtime.enable', 'Log.enable', 'Page.enable', 'Network.enable'])
      await this.send(m, {}, sessionId);
    await this.send(
      'Emulation.setDeviceMetricsOverride',
      { ...viewport, deviceScaleFactor: 1, mobile: false },
      sessionId,
    );
    await this.send('Page.navigate', { url }, sessionId);
    await load;
    return { sessionId, events };
  }

  async close(): Promise<void> {
    await this.send('Browser.close').catch(() => {
      // the socket is closed below whether or not the browser answered
    });
    this.ws.close();
    await new Promise<void>((resolve) => {
      if (this.proc.exitCode !== null) return resolve();
      const t = setTimeout(() => {
        this.proc.kill('SIGKILL');
        resolve();
      }, 5000);
      this.proc.on('exit', () => {
        clearTimeout(t);
        resolve();
      });
    });
    rmSync(this.profile, { recursive: true, force: true });
  }
}

// `usage-pipeline status`: what is collected, coverage per source/granularity/scope, freshness, last runs.
import { existsSync } from 'node:fs';
import { openStore, STORE_STORAGE_VERSION, StoreLockedError, type Store } from '../store/store.js';
import { analystCopyPath } from '../store/publish.js';
import { listMigrations } from '../store/migrations.js';
import { UsageError } from '../domain/errors.js';
import { readLockHolder, readRunProgress } from '../app/lock.js';
import { pidAlive } from '../process.js';
import { checkStatus, type StatusCheck } from './statusCheck.js';
import { commandContext, type CommonOptions } from '../app/context.js';

export interface StatusResult {
  db: string;
  /** The file read: the database itself, or the analyst copy while a collection holds the database. */
  readFrom: string;
  note?: string;
  schemaVersion: number;
  /** The database file's storage format (read from the database itself only); `current` when it is the
   *  one this release creates files in, else `compact` rewrites it. */
  storage?: { format: string; current: boolean };
  coverage: Awaited<ReturnType<Store['coverage']['summary']>>;
  runs: Awaited<ReturnType<Store['runs']['last']>>;
  rows: { usage_program: number; usage_framework: number; programs: number; frameworks: number; snapshots: number };
  /** What `status --check` judges: every configured scope fresh, the last run successful. */
  check: StatusCheck;
  /** A collection holding the database now, with its progress (from the file beside the run lock). */
  running?: RunningCollection;
}

export interface RunningCollection {
  pid: number;
  command: string;
  since: string;
  phase: string | null;
  requestsDone: number | null;
  requestsPlanned: number | null;
  valuesLoaded: number | null;
}

function runningCollection(dbPath: string): RunningCollection | undefined {
  const holder = readLockHolder(dbPath);
  if (!holder || !pidAlive(holder.pid)) return undefined;
  const p = readRunProgress(dbPath);
  const mine = p && p.pid === holder.pid ? p : null;
  return {
    pid: holder.pid,
    command: holder.command,
    since: holder.started_at,
    phase: mine?.phase ?? null,
    requestsDone: mine?.requests_done ?? null,
    requestsPlanned: mine?.requests_planned ?? null,
    valuesLoaded: mine?.values_loaded ?? null,
  };
}

/** The status while the first collection runs: it holds the database and has published nothing yet. */
function firstCollectionStatus(dbPath: string, running: RunningCollection): StatusResult {
  // The first collection holds the database and has published nothing yet: say so, exit 0.
  const what =
    running.requestsDone !== null
      ? `, ${running.requestsDone} of ${running.requestsPlanned} requests planned done, phase ${running.phase}`
      : '';
  return {
    db: dbPath,
    readFrom: '',
    note: `the first collection is in progress (pid ${running.pid}, since ${running.since}${what}); nothing is published yet`,
    schemaVersion: 0,
    coverage: [],
    runs: [],
    rows: { usage_program: 0, usage_framework: 0, programs: 0, frameworks: 0, snapshots: 0 },
    check: {
      ok: false,
      reason: `first collection in progress (pid ${running.pid}, since ${running.since})`,
      problems: [],
    },
    running,
  };
}

export async function statusCommand(
  opts: CommonOptions & { runs?: number; now?: () => number },
): Promise<StatusResult> {
  const ctx = commandContext(opts);
  const running = runningCollection(ctx.dbPath);
  const copy = analystCopyPath(ctx.dbPath);
  if (running && !existsSync(copy)) {
    return firstCollectionStatus(ctx.dbPath, running);
  }
  if (!existsSync(ctx.dbPath)) {
    throw new StatusNoDatabase(
      `no database at ${ctx.dbPath} yet: run \`usage-pipeline collect\` first (or \`npm start\` for the demo).`,
    );
  }
  let store: Store;
  let readFrom = ctx.dbPath;
  let note: string | undefined;
  try {
    // While a collection holds the database, go straight to the copy rather than wait for DuckDB's lock.
    if (running) throw new StoreLockedError(ctx.dbPath, 0, `held by pid ${running.pid}`);
    store = await openStore({ path: ctx.dbPath, readOnly: true, lockTimeoutMs: 2_000, log: ctx.log });
  } catch (err) {
    if (!(err instanceof StoreLockedError) || !existsSync(copy)) throw err;
    store = await openStore({ path: copy, readOnly: true, log: ctx.log });
    readFrom = copy;
    note =
      'the database is in use (a collection is probably running); showing the analyst copy from the last completed run';
  }
  try {
    await refuseOlderSchema(store, readFrom);
    // Stored rows, from row group sizes: status reads metadata, never the usage itself.
    const usage = await store.usage.rowCounts();
    const dims = await store.inventory.counts();
    const coverage = await store.coverage.summary();
    const runs = await store.runs.last(opts.runs ?? 5);
    const holder = readLockHolder(ctx.dbPath);
    const check = checkStatus(
      { coverage, runs },
      ctx.config,
      (opts.now ?? Date.now)(),
      () => holder !== null && pidAlive(holder.pid),
    );
    return {
      db: ctx.dbPath,
      readFrom,
      ...(note ? { note } : {}),
      schemaVersion: await store.schemaVersion(),
      ...(readFrom === ctx.dbPath ? { storage: await storageOf(store) } : {}),
      coverage,
      runs,
      check,
      ...(running ? { running } : {}),
      rows: {
        usage_program: usage.usage_program,
        usage_framework: usage.usage_framework,
        programs: dims.programs,
        frameworks: dims.frameworks,
        snapshots: dims.snapshots,
      },
    };
  } finally {
    await store.close();
  }
}

export class StatusNoDatabase extends Error {}

async function storageOf(store: Store): Promise<{ format: string; current: boolean }> {
  const format = await store.storageFormat();
  return { format, current: format === `${STORE_STORAGE_VERSION}+` };
}

/** A file this release has not upgraded yet lacks the kept summaries status reads: say what upgrades it. */
async function refuseOlderSchema(store: Store, path: string): Promise<void> {
  const version = await store.schemaVersion();
  const release = listMigrations().at(-1)!.version;
  if (version >= release) return;
  throw new UsageError(
    `${path} has schema version ${version}, and this release reads version ${release}: ` +
      'run `usage-pipeline collect` once (it upgrades the database and publishes a new analyst copy), then `status` again.',
  );
}

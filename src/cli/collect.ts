// `usage-pipeline collect`: checks the flags (commander parsed them in main.ts) and runs collectOnce().
import { GRANULARITIES, SOURCES, type Granularity, type Source } from '../domain/granularity.js';
import type { CollectProgress } from '../collect/collect.js';
import {
  collectOnce,
  prepareCollect,
  type CollectOnceOptions,
  type CollectOnceResult,
  type PreparedCollect,
} from '../app/collect.js';
import { parseIsoFlag } from '../collect/planner.js';
import { UsageError } from '../domain/errors.js';
import { commandContext, type CommandContext, type CommonOptions } from '../app/context.js';

export interface CollectCommandOptions extends CommonOptions {
  from?: string;
  to?: string;
  granularity?: string;
  sources?: string;
  baseUrl?: string;
  orgs?: string;
  includePartial?: boolean;
  inventory?: 'auto' | 'always' | 'never';
  acceptDeletions?: boolean;
  insecureHttp?: boolean;
  now?: () => number;
  progress?: CollectProgress;
  signal?: AbortSignal;
}

export function parseList<T extends string>(flag: string, value: string, allowed: readonly T[]): T[] {
  const items = value
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  const bad = items.filter((i) => !allowed.includes(i as T));
  if (!items.length || bad.length) {
    throw new UsageError(
      `${flag} "${value}": ${bad.length ? `unknown value ${bad.map((b) => `"${b}"`).join(', ')}` : 'empty'}; allowed: ${allowed.join(', ')} (comma-separated).`,
    );
  }
  return [...new Set(items)] as T[];
}

/** Everything that can be refused is checked here, before a single request is sent. */
export function validateCollectFlags(opts: CollectCommandOptions) {
  const from = opts.from !== undefined ? parseIsoFlag('--from', opts.from) : undefined;
  const to = opts.to !== undefined ? parseIsoFlag('--to', opts.to) : undefined;
  if (from !== undefined && to !== undefined && to <= from) {
    throw new UsageError(`--to ${opts.to} is not after --from ${opts.from}: the range is half-open [from, to).`);
  }
  const granularities =
    opts.granularity !== undefined
      ? parseList<Granularity>('--granularity', opts.granularity, GRANULARITIES)
      : undefined;
  const sources = opts.sources !== undefined ? parseList<Source>('--sources', opts.sources, SOURCES) : undefined;
  const orgs =
    opts.orgs !== undefined
      ? opts.orgs
          .split(',')
          .map((s) => s.trim())
          .filter(Boolean)
      : undefined;
  if (orgs !== undefined && !orgs.length)
    throw new UsageError('--orgs is empty: give organization ids, comma-separated.');
  return { from, to, granularities, sources, orgs };
}

export interface PreparedCollectCommand {
  ctx: CommandContext;
  options: CollectOnceOptions;
  prepared: PreparedCollect;
}

/**
 * Everything a collect can refuse (flags, dates, base URL, key, the database's folder), checked with no
 * side effect: no lock, no folder, no database, no request. main.ts calls this before it takes the run lock.
 */
export function prepareCollectCommand(opts: CollectCommandOptions): PreparedCollectCommand {
  const ctx = commandContext(opts);
  const flags = validateCollectFlags(opts);
  const options: CollectOnceOptions = {
    ...(flags.granularities ? { granularities: flags.granularities } : {}),
    ...(flags.sources ? { sources: flags.sources } : {}),
    ...(flags.orgs ? { orgs: flags.orgs } : {}),
    ...(flags.from !== undefined ? { from: flags.from } : {}),
    ...(flags.to !== undefined ? { to: flags.to } : {}),
    ...(opts.baseUrl !== undefined ? { baseUrl: opts.baseUrl } : {}),
    ...(opts.insecureHttp ? { insecureHttp: true } : {}),
    ...(opts.includePartial !== undefined ? { includePartial: opts.includePartial } : {}),
    ...(opts.inventory ? { inventory: opts.inventory } : {}),
    ...(opts.acceptDeletions ? { acceptDeletions: true } : {}),
    ...(opts.now ? { now: opts.now } : {}),
  };
  return { ctx, options, prepared: prepareCollect(ctx, options) };
}

export async function collectCommand(
  opts: CollectCommandOptions,
  prep: PreparedCollectCommand = prepareCollectCommand(opts),
): Promise<CollectOnceResult> {
  return collectOnce(
    prep.ctx,
    {
      ...prep.options,
      ...(opts.progress ? { progress: opts.progress } : {}),
      ...(opts.signal ? { signal: opts.signal } : {}),
    },
    prep.prepared,
  );
}

// The fewest requests a collection needs, computed from the sandbox's world (not from what the collector
// did), for a collector that knows every count: per organization and source, one page per 100 programs;
// for the frameworks, the batching of the programs (at most 100 per request, in the order the API lists
// them) with the fewest requests, one page per 1,000 frameworks each; and the single 403 an organization
// answers for the API version its plan does not serve. A query whose last page is exactly full is charged
// one more: the API may answer it with a cursor to an empty page (it does for about half such queries),
// and no client can tell beforehand. Frameworks batches avoid that where it is cheaper (99 programs of 10
// frameworks rather than 100); a programs listing cannot (a smaller page size costs that page too). The
// same count with the API's default page sizes and fixed batches of 10 programs, exactly full pages not
// charged, gives the naive baseline's request count.
// Run as a child process (the world of the large scenario is big): node dist/bench/minimum.js <json args>
import { pathToFileURL } from 'node:url';
import { MAX_PROGRAM_IDS, PAGE_SIZE } from '../src/contract/api.js';
import { type Granularity } from '../src/domain/granularity.js';
import { listFrameworks, listPrograms } from '../src/sandbox/consumption.js';
import { generateWorld, type Scenario, type World } from '../src/sandbox/world.js';

export interface BenchWindow {
  granularity: Granularity;
  /** ISO date-times, aligned to the granularity; the range is half-open. */
  from: string;
  to: string;
}

export interface PageSizes {
  programs: number;
  frameworks: number;
  /** Programs per frameworks request: at most (ours), or exactly (the naive baseline's fixed batches). */
  frameworkBatch: number;
  /** A collector that knows every count: an exactly full last page is charged the empty page it may cost,
   *  and frameworks batches are sized to the fewest requests so charged (`fewestFrameworkRequests`). Else
   *  fixed batches counted at their pages (the naive baseline: its measured requests per counted page
   *  carry the empty pages it is sent). */
  knowsCounts: boolean;
}

export const OUR_PAGE_SIZES: PageSizes = {
  programs: PAGE_SIZE.v2_programs.max,
  frameworks: PAGE_SIZE.v2_frameworks.max,
  frameworkBatch: MAX_PROGRAM_IDS,
  knowsCounts: true,
};
export const DEFAULT_PAGE_SIZES: PageSizes = {
  programs: PAGE_SIZE.v2_programs.default,
  frameworks: PAGE_SIZE.v2_frameworks.default,
  frameworkBatch: 10,
  knowsCounts: false,
};

export interface RequestCount {
  /** Pages of data; when the collector knows the counts, with the empty page each exactly full last page
   *  may cost. */
  pages: number;
  /** 403 answers: an organization asked on the API version its plan does not serve. */
  forbidden: number;
  /** GET /users/me/organizations: one per run, to learn which organizations the key reaches. */
  orgListing: number;
  /** Queries whose last page is exactly full, counted at their pages (the naive count; ours charges them):
   *  a cursor client cannot tell it is the last, and asks once more when the API hands back a cursor. */
  fullLastPages: number;
  programs: number;
  frameworks: number;
  total: number;
}

/** Pages a list of `n` items needs at `limit` per page; a query that lists nothing still costs one request. */
export function pagesFor(n: number, limit: number): number {
  return Math.max(1, Math.ceil(n / limit));
}

/** Whether the last page of `n` items at `limit` per page is exactly full (and not empty). */
export function fullLastPage(n: number, limit: number): boolean {
  return n > 0 && n % limit === 0;
}

/** Requests a query of `n` items at `limit` per page can cost: its pages, and the empty page an exactly
 *  full last one may lead to. */
export function pagesCharged(n: number, limit: number): number {
  return pagesFor(n, limit) + (fullLastPage(n, limit) ? 1 : 0);
}

/**
 * The fewest frameworks requests for programs with these framework counts, asked in this order, at most
 * `maxIds` programs per request, each charged `pagesCharged`. Batches of 100 programs of 10 frameworks
 * each fill their page exactly: 99 programs per request, a few more requests, is then the fewest a client
 * can be sure of. Dynamic programming over where each request ends.
 */
export function fewestFrameworkRequests(counts: readonly number[], pageSize: number, maxIds: number): number {
  const fewest = new Array<number>(counts.length + 1).fill(Infinity);
  fewest[0] = 0;
  for (let end = 1; end <= counts.length; end++) {
    let frameworks = 0;
    for (let size = 1; size <= Math.min(maxIds, end); size++) {
      frameworks += counts[end - size]!;
      fewest[end] = Math.min(fewest[end]!, fewest[end - size]! + pagesCharged(frameworks, pageSize));
    }
  }
  return fewest[counts.length]!;
}

export function minimumRequests(
  world: World,
  windows: readonly BenchWindow[],
  now: number,
  sizes: PageSizes = OUR_PAGE_SIZES,
  orgLimit?: Map<string, number>,
): RequestCount {
  const c: RequestCount = {
    pages: 0,
    forbidden: 0,
    orgListing: 0,
    fullLastPages: 0,
    programs: 0,
    frameworks: 0,
    total: 0,
  };
  for (const win of windows) {
    c.orgListing += 1;
    const w = { granularity: win.granularity, from: Date.parse(win.from), to: Date.parse(win.to), now };
    for (const orgId of world.personal_org_ids) {
      const org = world.orgById.get(orgId);
      if (!org) continue;
      c.forbidden += 1; // the other API version
      const source = org.billing === 'legacy' ? 'v1_programs' : 'v2_programs';
      let programs = listPrograms(world, source, new Set([orgId]), w);
      const cap = orgLimit?.get(orgId);
      if (cap !== undefined) programs = programs.slice(0, cap);
      c.programs += programs.length;
      if (sizes.knowsCounts) {
        c.pages += pagesCharged(programs.length, sizes.programs);
      } else {
        c.pages += pagesFor(programs.length, sizes.programs);
        if (fullLastPage(programs.length, sizes.programs)) c.fullLastPages += 1;
      }
      if (source !== 'v2_programs') continue;
      if (sizes.knowsCounts) {
        const counts = programs.map((p) => listFrameworks(world, [p.id], w).length);
        c.frameworks += counts.reduce((a, b) => a + b, 0);
        c.pages += fewestFrameworkRequests(counts, sizes.frameworks, sizes.frameworkBatch);
        continue;
      }
      for (let i = 0; i < programs.length; i += sizes.frameworkBatch) {
        const ids = programs.slice(i, i + sizes.frameworkBatch).map((p) => p.id);
        const n = listFrameworks(world, ids, w).length;
        c.frameworks += n;
        c.pages += pagesFor(n, sizes.frameworks);
        if (fullLastPage(n, sizes.frameworks)) c.fullLastPages += 1;
      }
    }
  }
  c.total = c.pages + c.forbidden + c.orgListing;
  return c;
}

export interface MinimumArgs {
  scenario: Scenario;
  seed?: number;
  /** The sandbox's clock at start (the world is generated at it). */
  now: string;
  /** The sandbox's clock when the windows are collected, when it was moved after start (the bench's set-up
   *  collects a day earlier); default `now`. */
  clock?: string;
  windows: BenchWindow[];
  /** For the baseline's subset: the first N programs of each organization. */
  programsPerOrg?: number;
}

export interface MinimumResult {
  ours: RequestCount;
  /** `ours` for each window alone, in the order given. */
  perWindow: RequestCount[];
  naive: RequestCount;
  /** The naive count restricted to the baseline's subset, when programsPerOrg was given. */
  naiveSubset?: RequestCount;
  organizations: { id: string; billing: string }[];
}

export function computeMinimum(args: MinimumArgs): MinimumResult {
  const world = generateWorld({ seed: args.seed ?? 1, scenario: args.scenario, now: Date.parse(args.now) });
  const now = Date.parse(args.clock ?? args.now);
  const out: MinimumResult = {
    ours: minimumRequests(world, args.windows, now, OUR_PAGE_SIZES),
    perWindow: args.windows.map((w) => minimumRequests(world, [w], now, OUR_PAGE_SIZES)),
    naive: minimumRequests(world, args.windows, now, DEFAULT_PAGE_SIZES),
    organizations: world.personal_org_ids.map((id) => ({ id, billing: world.orgById.get(id)?.billing ?? '' })),
  };
  if (args.programsPerOrg !== undefined) {
    const cap = new Map(world.personal_org_ids.map((id) => [id, args.programsPerOrg as number]));
    out.naiveSubset = minimumRequests(world, args.windows, now, DEFAULT_PAGE_SIZES, cap);
  }
  return out;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  console.log(JSON.stringify(computeMinimum(JSON.parse(process.argv[2] ?? '{}') as MinimumArgs)));
}

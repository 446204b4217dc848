// The fewest requests a collection needs, computed from the sandbox's world (not from what the collector
// did): per organization and source, one page per 100 programs; per batch of 100 programs (a programs
// page, in the order the API lists them), one frameworks page per 1,000 frameworks; and the single 403 an
// organization answers for the API version its plan does not serve. The same count with the API's
// default page sizes gives the naive baseline's request count.
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
  /** Programs per frameworks request. */
  frameworkBatch: number;
}

export const OUR_PAGE_SIZES: PageSizes = { programs: PAGE_SIZE.v2_programs.max, frameworks: PAGE_SIZE.v2_frameworks.max, frameworkBatch: MAX_PROGRAM_IDS };
export const DEFAULT_PAGE_SIZES: PageSizes = { programs: PAGE_SIZE.v2_programs.default, frameworks: PAGE_SIZE.v2_frameworks.default, frameworkBatch: 10 };

export interface RequestCount {
  /** Non-empty pages of data. */
  pages: number;
  /** 403 answers: an organization asked on the API version its plan does not serve. */
  forbidden: number;
  /** GET /users/me/organizations: one per run, to learn which organizations the key reaches. */
  orgListing: number;
  /** Queries whose last page is exactly full: a cursor client cannot tell it is the last, and asks once more
   *  when the API hands back a cursor (the API does for about half of such queries). An upper bound on waste
   *  the API's paging forces. */
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

export function minimumRequests(world: World, windows: readonly BenchWindow[], now: number, sizes: PageSizes = OUR_PAGE_SIZES, orgLimit?: Map<string, number>): RequestCount {
  const c: RequestCount = { pages: 0, forbidden: 0, orgListing: 0, fullLastPages: 0, programs: 0, frameworks: 0, total: 0 };
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
      c.pages += pagesFor(programs.length, sizes.programs);
      if (fullLastPage(programs.length, sizes.programs)) c.fullLastPages += 1;
      if (source !== 'v2_programs') continue;
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
  const now = Date.parse(args.now);
  const world = generateWorld({ seed: args.seed ?? 1, scenario: args.scenario, now });
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

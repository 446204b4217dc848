// The inventory's listing endpoints: GET /programs, /programs/{id}, /programs/{id}/frameworks and
// /programs/{id}/snapshots, each showing what is live at the sandbox's clock.

import { reachesProgram } from './auth.js';
import { sortedPrograms } from './consumption.js';
import { isoSeconds } from './json.js';
import { intParam, paginate, withCursor } from './params.js';
import { notFound, type Route, type RouteContext } from './route.js';
import type { Framework, Program } from './world.js';

/** GET /programs page size (the list endpoint's own bound, not a usage limit). */
const PROGRAMS_LIST_PAGE = { min: 1, max: 400, default: 10 } as const;

// ---- listing endpoints ------------------------------------------------------------------------

function live(t: { created_at: number; deleted_at?: number }, now: number): boolean {
  return t.created_at <= now && (t.deleted_at === undefined || t.deleted_at > now);
}

/** A program's updated_at moves when one of its frameworks or snapshots appears or goes away. */
function programUpdatedAt(world: RouteContext['world'], p: Program, now: number): number {
  let at = p.created_at;
  for (const f of world.frameworksByProgram.get(p.id) ?? []) {
    if (f.created_at <= now) at = Math.max(at, f.created_at);
    if (f.deleted_at !== undefined && f.deleted_at <= now) at = Math.max(at, f.deleted_at);
  }
  for (const s of world.snapshotsByProgram.get(p.id) ?? []) {
    if (s.created_at <= now) at = Math.max(at, s.created_at);
    if (s.expires_at !== undefined && s.expires_at <= now) at = Math.max(at, s.expires_at);
  }
  return at;
}

function programItem(p: Program, ctx: RouteContext): Record<string, unknown> {
  return {
    id: p.id,
    org_id: p.org_id,
    name: p.name,
    region_id: p.region_id,
    created_at: isoSeconds(p.created_at),
    updated_at: isoSeconds(programUpdatedAt(ctx.world, p, ctx.now)),
  };
}

function frameworkItem(f: Framework, now: number): Record<string, unknown> {
  const passing = Math.min(f.controls_total, Math.floor((f.controls_total * (60 + ((f.key >>> 3) % 40))) / 100));
  return {
    id: f.id,
    program_id: f.program_id,
    name: f.name,
    display_name: f.display_name,
    controls_passing: passing,
    controls_total: f.controls_total,
    current_state: 'ready',
    default: f.default,
    protected: false,
    created_at: isoSeconds(f.created_at),
    updated_at: isoSeconds(Math.max(f.created_at, now - 86_400_000)),
  };
}

function liveProgram(ctx: RouteContext): Program {
  const id = ctx.params[0] as string;
  const p = ctx.world.programById.get(id);
  if (!p || !reachesProgram(ctx.key, p) || !live(p, ctx.now)) throw notFound(`program '${id}' not found`);
  return p;
}

function listProgramsRoute(ctx: RouteContext): unknown {
  const limit = intParam(ctx.query, 'limit', PROGRAMS_LIST_PAGE);
  const orgId = ctx.query.get('org_id') || undefined;
  if (orgId !== undefined && !ctx.key.orgIds.has(orgId)) throw notFound(`organization '${orgId}' not found`);
  const list = sortedPrograms(ctx.world, 'v1_programs').filter(
    (p) => reachesProgram(ctx.key, p) && live(p, ctx.now) && (orgId === undefined || p.org_id === orgId),
  );
  const { page, cursor } = paginate(ctx, list, (p) => p.id, limit);
  return withCursor({ programs: page.map((p) => programItem(p, ctx)) }, cursor);
}

export const LISTING_ROUTES: readonly Route[] = [
  { template: '/programs', pattern: /^\/programs$/, handle: listProgramsRoute },
  {
    template: '/programs/{id}',
    pattern: /^\/programs\/([^/]+)$/,
    handle: (ctx) => ({ program: programItem(liveProgram(ctx), ctx) }),
  },
  {
    template: '/programs/{id}/frameworks',
    pattern: /^\/programs\/([^/]+)\/frameworks$/,
    handle: (ctx) => {
      const p = liveProgram(ctx);
      return {
        frameworks: (ctx.world.frameworksByProgram.get(p.id) ?? [])
          .filter((f) => live(f, ctx.now))
          .map((f) => frameworkItem(f, ctx.now)),
      };
    },
  },
  {
    template: '/programs/{id}/snapshots',
    pattern: /^\/programs\/([^/]+)\/snapshots$/,
    handle: (ctx) => {
      const p = liveProgram(ctx);
      const snaps = (ctx.world.snapshotsByProgram.get(p.id) ?? []).filter(
        (s) => s.created_at <= ctx.now && (s.expires_at === undefined || s.expires_at > ctx.now),
      );
      return {
        snapshots: snaps.map((s) => ({
          id: s.id,
          name: s.name,
          source_branch_id: s.source_branch_id,
          created_at: isoSeconds(s.created_at),
          manual: s.manual,
          ...(s.expires_at !== undefined ? { expires_at: isoSeconds(s.expires_at) } : {}),
        })),
      };
    },
  },
];

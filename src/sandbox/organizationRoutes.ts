// Who the key is (GET /auth) and the organizations it reaches (GET /users/me/organizations).

import { ApiError, notFound, type Route, type RouteContext } from './route.js';

function authRoute(ctx: RouteContext): unknown {
  return {
    auth_method: 'api_key',
    key_type: ctx.key.type,
    org_ids: [...ctx.key.orgIds],
    ...(ctx.key.programId !== undefined ? { program_id: ctx.key.programId } : {}),
  };
}

/** The organization's monthly spending limit in cents; 404 when none is set (or the key does not reach it), 403 when refused. */
function spendingLimitRoute(ctx: RouteContext): unknown {
  const orgId = ctx.params[0] ?? '';
  if (!ctx.key.orgIds.has(orgId)) throw notFound(`organization ${orgId} not found`);
  const limit = ctx.world.spendingLimits.get(orgId);
  if (limit === undefined || 'status' in limit) {
    if (limit?.status === 403)
      throw new ApiError(403, 'forbidden', 'billing is not available to this key for the organization');
    throw notFound(`organization ${orgId} has no spending limit`);
  }
  return { spending_limit: limit.cents };
}

export const ORGANIZATION_ROUTES: readonly Route[] = [
  { template: '/auth', pattern: /^\/auth$/, handle: authRoute },
  {
    template: '/users/me/organizations',
    pattern: /^\/users\/me\/organizations$/,
    handle: (ctx) => ({
      organizations: ctx.world.orgs.filter((o) => ctx.key.orgIds.has(o.id)).map((o) => ({ id: o.id, name: o.name })),
    }),
  },
  {
    template: '/organizations/{org_id}/billing/spending_limit',
    pattern: /^\/organizations\/([^/]+)\/billing\/spending_limit$/,
    handle: spendingLimitRoute,
  },
];

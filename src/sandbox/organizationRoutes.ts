// Who the key is (GET /auth) and the organizations it reaches (GET /users/me/organizations).

import type { Route, RouteContext } from './route.js';

function authRoute(ctx: RouteContext): unknown {
  return {
    auth_method: 'api_key',
    key_type: ctx.key.type,
    org_ids: [...ctx.key.orgIds],
    ...(ctx.key.programId !== undefined ? { program_id: ctx.key.programId } : {}),
  };
}

export const ORGANIZATION_ROUTES: readonly Route[] = [
  { template: '/auth', pattern: /^\/auth$/, handle: authRoute },
  {
    template: '/users/me/organizations',
    pattern: /^\/users\/me\/organizations$/,
    handle: (ctx) => ({ organizations: ctx.world.orgs.filter((o) => ctx.key.orgIds.has(o.id)).map((o) => ({ id: o.id, name: o.name })) }),
  },
];

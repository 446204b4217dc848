// The /v1 endpoints the sandbox serves, by family (listings, organizations, consumption), each a
// function from an authenticated request to a JSON body, throwing ApiError for the statuses the API
// documents; the sandbox's own control endpoints (/__sandbox/) are in server.ts.

import { CONSUMPTION_ROUTES } from './consumptionRoutes.js';
import { LISTING_ROUTES } from './listingRoutes.js';
import { ORGANIZATION_ROUTES } from './organizationRoutes.js';
import type { Route } from './route.js';

const ROUTES: readonly Route[] = [...LISTING_ROUTES, ...ORGANIZATION_ROUTES, ...CONSUMPTION_ROUTES];

export function matchRoute(path: string): { route: Route; params: string[] } | undefined {
  for (const route of ROUTES) {
    const m = route.pattern.exec(path);
    if (m) return { route, params: m.slice(1).map((s) => decodeURIComponent(s)) };
  }
  return undefined;
}

// Which organizations a collection covers: those configured or passed, else the ones the key reaches
// (GET /users/me/organizations), whose names are kept for the reports.
import { ApiError } from '../api/errors.js';
import { fatal401, FatalCollectError } from './errors.js';
import type { CollectOptions } from './types.js';

export async function resolveOrgs(opts: CollectOptions): Promise<string[]> {
  const given = opts.orgs?.length ? opts.orgs : opts.config.collect.orgs;
  if (given.length) return [...given];
  try {
    const { body } = await opts.client.getJson<{ organizations?: { id?: unknown; name?: unknown }[] }>(
      '/users/me/organizations',
      {},
      opts.signal ? { signal: opts.signal } : {},
    );
    const orgs = (body.organizations ?? []).filter(
      (o): o is { id: string; name?: unknown } => typeof o.id === 'string',
    );
    if (!orgs.length)
      throw new FatalCollectError(
        'the API key belongs to no organization; set collect.orgs in the config or pass --orgs.',
      );
    // Their names name the billing accounts of the reports (FOCUS BillingAccountName).
    const seenAt = new Date((opts.now ?? Date.now)());
    for (const o of orgs) {
      await opts.store.inventory.upsertOrganization({
        orgId: o.id,
        name: typeof o.name === 'string' && o.name !== '' ? o.name : null,
        seenAt,
      });
    }
    return orgs.map((o) => o.id).sort();
  } catch (err) {
    if (err instanceof ApiError && err.status === 401) throw fatal401(err);
    if (err instanceof ApiError && err.status === 404) {
      throw new FatalCollectError(
        `this key cannot list organizations (404, request id ${err.requestId}); an organization or program key must name its organization: set collect.orgs in the config or pass --orgs.`,
      );
    }
    throw err;
  }
}

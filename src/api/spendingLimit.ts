// An organization's monthly spending limit (GET /organizations/{org_id}/billing/spending_limit,
// ARCHITECTURE.md "API facts"): cents, or none. The API answers 404 when no limit is set and 403 when
// the key may not see the organization's billing; both mean the organization has no budget from it.
import type { ApiClient } from './client.js';
import { ApiError, ResponseFormatError } from './errors.js';

export type SpendingLimit = { answer: 'limit'; cents: bigint } | { answer: 'none'; status: 200 | 403 | 404 };

export async function readSpendingLimit(
  client: ApiClient,
  orgId: string,
  signal?: AbortSignal,
): Promise<SpendingLimit> {
  try {
    const { body, requestId } = await client.getJson<{ spending_limit?: unknown }>(
      `/organizations/${encodeURIComponent(orgId)}/billing/spending_limit`,
      {},
      { route: '/organizations/{org_id}/billing/spending_limit', ...(signal ? { signal } : {}) },
    );
    const v = body?.spending_limit;
    if (v === undefined || v === null) return { answer: 'none', status: 200 };
    // Lossless JSON: an integer arrives as a bigint or a safe number; anything else is nonsense.
    const cents = typeof v === 'bigint' ? v : typeof v === 'number' && Number.isSafeInteger(v) ? BigInt(v) : null;
    if (cents === null || cents < 0n) {
      throw new ResponseFormatError(
        `GET /organizations/${orgId}/billing/spending_limit answered a spending_limit that is not a non-negative integer of cents (request id ${requestId})`,
        requestId,
        `/organizations/${orgId}/billing/spending_limit`,
      );
    }
    return { answer: 'limit', cents };
  } catch (err) {
    if (err instanceof ApiError && (err.status === 403 || err.status === 404))
      return { answer: 'none', status: err.status };
    throw err;
  }
}

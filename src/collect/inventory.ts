// Programs, frameworks and snapshots into the dimension tables. Two requests per program, so it runs
// on its own slower cadence (config inventory.max_age_hours), never on every hourly collection.
import type { ApiClient } from '../api/client.js';
import type { Store } from '../store/store.js';
import type { Logger } from '../log.js';
import { cursorPages, jsonPage } from './pagers.js';

/** GET /programs page size: the spec leaves it unstated; the sandbox and the real API accept 400. */
export const PROGRAMS_LIST_LIMIT = 400;

type Obj = Record<string, unknown>;

export interface InventoryResult {
  programs: number;
  frameworks: number;
  snapshots: number;
}

const asDate = (v: unknown): Date | null => (typeof v === 'string' && !Number.isNaN(Date.parse(v)) ? new Date(v) : null);
const asStr = (v: unknown): string | null => (typeof v === 'string' ? v : null);

export async function refreshInventory(opts: {
  client: ApiClient;
  store: Store;
  orgs: readonly string[];
  seenAt: Date;
  log: Logger;
}): Promise<InventoryResult> {
  const { client, store, orgs, seenAt } = opts;
  const wanted = new Set(orgs);
  const programs: Obj[] = [];
  for await (const page of cursorPages(
    async (cursor) => {
      const { body, requestId } = await client.getJson('/programs', { limit: PROGRAMS_LIST_LIMIT, cursor });
      return jsonPage<Obj>(body, 'programs', requestId);
    },
    { itemsKey: 'programs', limit: PROGRAMS_LIST_LIMIT, describe: 'GET /programs' },
  )) {
    for (const p of page.list) if (wanted.size === 0 || wanted.has(String(p.org_id))) programs.push(p);
  }
  await store.upsertPrograms(
    programs.map((p) => ({
      program_id: String(p.id),
      org_id: asStr(p.org_id),
      name: asStr(p.name),
      region_id: asStr(p.region_id),
      created_at: asDate(p.created_at),
    })),
    { seenAt, completeForOrgs: [...wanted] },
  );

  const ids = programs.map((p) => String(p.id));
  const [frameworkLists, snapshotLists] = await Promise.all([
    Promise.all(
      ids.map((id) =>
        client.getJson<{ frameworks?: Obj[] }>(`/programs/${encodeURIComponent(id)}/frameworks`, {}, { route: '/programs/{id}/frameworks' }),
      ),
    ),
    Promise.all(
      ids.map((id) =>
        client.getJson<{ snapshots?: Obj[] }>(`/programs/${encodeURIComponent(id)}/snapshots`, {}, { route: '/programs/{id}/snapshots' }),
      ),
    ),
  ]);
  const frameworks = frameworkLists.flatMap((r, i) =>
    (r.body.frameworks ?? []).map((f) => ({
      framework_id: String(f.id),
      program_id: asStr(f.program_id) ?? ids[i]!,
      name: asStr(f.name),
      current_state: asStr(f.current_state),
      created_at: asDate(f.created_at),
    })),
  );
  const snapshots = snapshotLists.flatMap((r, i) =>
    (r.body.snapshots ?? []).map((s) => ({
      snapshot_id: String(s.id),
      program_id: ids[i]!,
      name: asStr(s.name),
      source_framework_id: asStr(s.source_branch_id),
      created_at: asDate(s.created_at),
      manual: typeof s.manual === 'boolean' ? s.manual : null,
      expires_at: asDate(s.expires_at),
    })),
  );
  await store.upsertFrameworks(frameworks, { seenAt, completeForPrograms: ids });
  await store.upsertSnapshots(snapshots, { seenAt, completeForPrograms: ids });
  opts.log.info('inventory refreshed', { programs: programs.length, frameworks: frameworks.length, snapshots: snapshots.length });
  return { programs: programs.length, frameworks: frameworks.length, snapshots: snapshots.length };
}

// Bearer keys and their reach (API reference §5): the key type, not the endpoint, decides what a key sees,
// and anything outside it is 404, never 403.

import type { Program, World } from './world.js';

export type KeyType = 'personal' | 'organization' | 'program';

export interface KeyReach {
  type: KeyType;
  token: string;
  /** Organisations the key acts in (a program key: its program's organisation). */
  orgIds: ReadonlySet<string>;
  /** A program-scoped key reaches only this program. */
  programId?: string;
}

export function keyTable(world: World): Map<string, KeyReach> {
  const table = new Map<string, KeyReach>();
  table.set(world.keys.personal, {
    type: 'personal',
    token: world.keys.personal,
    orgIds: new Set(world.personal_org_ids),
  });
  for (const [orgId, token] of Object.entries(world.keys.org))
    table.set(token, { type: 'organization', token, orgIds: new Set([orgId]) });
  const scoped = world.programById.get(world.keys.program.programId);
  if (scoped) {
    table.set(world.keys.program.key, {
      type: 'program',
      token: world.keys.program.key,
      orgIds: new Set([scoped.org_id]),
      programId: scoped.id,
    });
  }
  return table;
}

/** The key from `Authorization: Bearer <key>`, or undefined when missing, malformed or unknown. */
export function authenticate(table: ReadonlyMap<string, KeyReach>, header: string | undefined): KeyReach | undefined {
  const m = /^Bearer\s+(\S+)\s*$/.exec(header ?? '');
  return m ? table.get(m[1] as string) : undefined;
}

export function reachesProgram(key: KeyReach, p: Program): boolean {
  return key.programId !== undefined ? p.id === key.programId : key.orgIds.has(p.org_id);
}

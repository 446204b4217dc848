import { beforeEach, describe, expect, it } from 'vitest';
import type { ProgramRow, Store } from '../../src/store/store.js';
import { useTempStore } from '../support/store.js';
import { rawSql } from '../../src/store/rawSql.js';

const currentStore = useTempStore();
let store: Store;
beforeEach(() => {
  store = currentStore();
});

const d1 = new Date('2025-01-01T00:00:00Z');
const d2 = new Date('2025-01-02T00:00:00Z');
const d3 = new Date('2025-01-03T00:00:00Z');
const prog = (id: string, org: string | null = 'org-1', name = id): ProgramRow => ({
  program_id: id,
  org_id: org,
  name,
  region_id: 'r1',
  created_at: d1,
});

describe('inventory upserts', () => {
  it('marks programs missing from a complete listing deleted, never deletes, and revives a re-listed one', async () => {
    await store.inventory.upsertPrograms([prog('p1'), prog('p2'), prog('p3'), prog('q1', 'org-2')], {
      seenAt: d1,
      completeForOrgs: ['org-1', 'org-2'],
    });
    // Day 2: org-1 lists p1 (renamed) and p3; p2 is gone. org-2 was not listed completely: q1 is untouched.
    await store.inventory.upsertPrograms([prog('p1', 'org-1', 'renamed'), prog('p3')], {
      seenAt: d2,
      completeForOrgs: ['org-1'],
    });
    // Day 3: p2 is back, p3 gone; an incomplete listing (no completeFor) marks nothing.
    await store.inventory.upsertPrograms([prog('p2')], { seenAt: d3, completeForOrgs: ['org-1'] });
    await store.inventory.upsertPrograms([prog('p2')], { seenAt: d3 });
    const rows = await rawSql(store).query(
      'SELECT program_id, name, first_seen_at, last_seen_at, deleted_at FROM programs ORDER BY program_id',
    );
    expect(rows).toEqual([
      { program_id: 'p1', name: 'renamed', first_seen_at: d1, last_seen_at: d2, deleted_at: d3 },
      { program_id: 'p2', name: 'p2', first_seen_at: d1, last_seen_at: d3, deleted_at: null },
      { program_id: 'p3', name: 'p3', first_seen_at: d1, last_seen_at: d2, deleted_at: d3 },
      { program_id: 'q1', name: 'q1', first_seen_at: d1, last_seen_at: d1, deleted_at: null },
    ]);
  });

  it('keeps the first deletion time when a program stays missing', async () => {
    await store.inventory.upsertPrograms([prog('p1'), prog('p2')], { seenAt: d1, completeForOrgs: ['org-1'] });
    await store.inventory.upsertPrograms([prog('p1')], { seenAt: d2, completeForOrgs: ['org-1'] });
    await store.inventory.upsertPrograms([prog('p1')], { seenAt: d3, completeForOrgs: ['org-1'] });
    expect(await rawSql(store).query("SELECT deleted_at FROM programs WHERE program_id = 'p2'")).toEqual([
      { deleted_at: d2 },
    ]);
  });

  it('takes the last copy of an item listed twice, and an empty complete listing marks its whole scope', async () => {
    await store.inventory.upsertFrameworks(
      [
        { framework_id: 'f1', program_id: 'p1', name: 'main', current_state: 'init', created_at: d1 },
        { framework_id: 'f2', program_id: 'p1', name: 'dev', current_state: 'ready', created_at: d1 },
        { framework_id: 'f1', program_id: 'p1', name: 'main', current_state: 'ready', created_at: d1 },
        { framework_id: 'g1', program_id: 'p2', name: 'main', current_state: 'ready', created_at: null },
      ],
      { seenAt: d1, completeForPrograms: ['p1', 'p2'] },
    );
    await store.inventory.upsertFrameworks([], { seenAt: d2, completeForPrograms: ['p1'] });
    expect(
      await rawSql(store).query('SELECT framework_id, current_state, deleted_at FROM frameworks ORDER BY framework_id'),
    ).toEqual([
      { framework_id: 'f1', current_state: 'ready', deleted_at: d2 },
      { framework_id: 'f2', current_state: 'ready', deleted_at: d2 },
      { framework_id: 'g1', current_state: 'ready', deleted_at: null },
    ]);
  });

  it('upserts snapshots with their nullable columns', async () => {
    await store.inventory.upsertSnapshots(
      [
        {
          snapshot_id: 's1',
          program_id: 'p1',
          name: 'nightly',
          source_framework_id: 'f1',
          created_at: d1,
          manual: false,
          expires_at: d3,
        },
        {
          snapshot_id: 's2',
          program_id: 'p1',
          name: null,
          source_framework_id: null,
          created_at: null,
          manual: null,
          expires_at: null,
        },
      ],
      { seenAt: d1, completeForPrograms: ['p1'] },
    );
    await store.inventory.upsertSnapshots(
      [
        {
          snapshot_id: 's2',
          program_id: 'p1',
          name: 'kept',
          source_framework_id: null,
          created_at: d2,
          manual: true,
          expires_at: null,
        },
      ],
      {
        seenAt: d2,
        completeForPrograms: ['p1'],
      },
    );
    expect(
      await rawSql(store).query(
        'SELECT snapshot_id, name, manual, expires_at, created_at, first_seen_at, deleted_at FROM snapshots ORDER BY 1',
      ),
    ).toEqual([
      {
        snapshot_id: 's1',
        name: 'nightly',
        manual: false,
        expires_at: d3,
        created_at: d1,
        first_seen_at: d1,
        deleted_at: d2,
      },
      {
        snapshot_id: 's2',
        name: 'kept',
        manual: true,
        expires_at: null,
        created_at: d2,
        first_seen_at: d1,
        deleted_at: null,
      },
    ]);
  });
});

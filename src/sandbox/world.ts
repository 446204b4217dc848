// The sandbox's organisations, programs, frameworks and snapshots, generated from a seed.
// Entities are plain data; usage values are not stored but computed on demand (usage.ts).

import { EARLIEST_FROM } from '../contract/api.js';
import { hash, hex8, mix32 } from './hash.js';
import { BYTE_MONTH_METRICS, bigFactor, programSeriesBases } from './usage.js';
import { applyEvents } from './events.js';
import type {
  Scenario,
  Billing,
  Plan,
  Org,
  Period,
  Program,
  Framework,
  Snapshot,
  SandboxKeys,
  World,
} from './model.js';

export type {
  Scenario,
  Billing,
  Plan,
  Org,
  Period,
  Program,
  Framework,
  Snapshot,
  SandboxKeys,
  World,
  Labels,
} from './model.js';
export { SCENARIOS } from './model.js';
const HOUR = 3_600_000;
const DAY = 86_400_000;

export const FRAMEWORK_DATA_START = Date.UTC(2025, 1, 10);
/** Programs are created over this stretch, so every scenario has history from before 2025-06-01. */
const CREATED_FROM = Date.UTC(2024, 3, 1);
const CREATED_TO = Date.UTC(2025, 4, 1);
/** Monthly plan changes are generated up to here; any clock before it finds one in every month. */
const CHANGES_UNTIL = Date.UTC(2036, 0, 1);

const ADJ = [
  'amber',
  'bold',
  'calm',
  'dawn',
  'eager',
  'fancy',
  'gentle',
  'hidden',
  'icy',
  'jolly',
  'keen',
  'lively',
  'misty',
  'noble',
  'odd',
  'proud',
  'quiet',
  'rapid',
  'silent',
  'tiny',
];
const NOUN = [
  'river',
  'forest',
  'meadow',
  'harbor',
  'canyon',
  'summit',
  'valley',
  'glade',
  'island',
  'lagoon',
  'prairie',
  'reef',
  'ridge',
  'delta',
  'grove',
  'mesa',
];
const REGIONS = ['aws-us-east-2', 'aws-eu-central-1', 'aws-us-west-2', 'azure-eastus2'];
const FRAMEWORK_NAMES: [string, string][] = [
  ['main', 'Main'],
  ['soc2', 'SOC 2'],
  ['iso27001', 'ISO 27001'],
  ['hipaa', 'HIPAA'],
  ['gdpr', 'GDPR'],
  ['pci-dss', 'PCI DSS'],
  ['nist-csf', 'NIST CSF'],
  ['iso27701', 'ISO 27701'],
  ['dora', 'DORA'],
  ['nis2', 'NIS2'],
  ['cis', 'CIS Controls'],
  ['fedramp', 'FedRAMP'],
];

interface OrgSpec {
  billing: Billing;
  programs: number;
  member: boolean;
  /** Frameworks per program: fixed count, or a range drawn per program. */
  frameworks: number | [number, number];
  snapshotsPerProgram: number;
}

function scenarioOrgs(scenario: Scenario): OrgSpec[] {
  const outsider: OrgSpec = {
    billing: 'current',
    programs: 2,
    member: false,
    frameworks: [2, 3],
    snapshotsPerProgram: 1,
  };
  if (scenario === 'large') {
    return [
      { billing: 'current', programs: 4500, member: true, frameworks: 10, snapshotsPerProgram: 2 },
      { billing: 'current', programs: 4500, member: true, frameworks: 10, snapshotsPerProgram: 2 },
      { billing: 'legacy', programs: 1000, member: true, frameworks: 10, snapshotsPerProgram: 2 },
      outsider,
    ];
  }
  if (scenario === 'medium') {
    // 380 programs in three member organizations: enough that the inventory's per-program listings (two
    // requests each) outnumber the consumption pages (test/collect/firstRun.int.test.ts), and a mid-size world
    // for the tie-out (test/report/tieout.test.ts); the programs listing still fits one page of 400.
    return [
      { billing: 'current', programs: 160, member: true, frameworks: [2, 10], snapshotsPerProgram: 2 },
      { billing: 'current', programs: 160, member: true, frameworks: [2, 10], snapshotsPerProgram: 2 },
      { billing: 'legacy', programs: 60, member: true, frameworks: [1, 4], snapshotsPerProgram: 2 },
      outsider,
    ];
  }
  return [
    { billing: 'current', programs: 12, member: true, frameworks: [2, 6], snapshotsPerProgram: 3 },
    { billing: 'legacy', programs: 8, member: true, frameworks: [1, 4], snapshotsPerProgram: 3 },
    outsider,
  ];
}

function pick<T>(list: readonly T[], h: number): T {
  return list[h % list.length] as T;
}

/** Monthly alternating plan changes at a fixed day and hour, from `created` to CHANGES_UNTIL. */
function monthlyChanges(
  created: number,
  plans: [Plan, Plan],
  day: number,
  hour: number,
): { plan: Plan; start: number }[] {
  const out: { plan: Plan; start: number }[] = [{ plan: plans[0], start: created }];
  const d = new Date(created);
  for (let y = d.getUTCFullYear(), m = d.getUTCMonth(); ; m++) {
    const t = Date.UTC(y, m, day, hour);
    if (t >= CHANGES_UNTIL) break;
    if (t > created) out.push({ plan: plans[out.length % 2] as Plan, start: t });
  }
  return out;
}

/** `events`: give the world its labelled events (events.ts); without, it is quiet and has no spending limits. */
export function generateWorld(
  opts: { seed?: number; scenario?: Scenario; now?: number; events?: boolean } = {},
): World {
  const seed = opts.seed ?? 1;
  const scenario = opts.scenario ?? 'small';
  const now = opts.now ?? Date.now();
  const S = mix32(seed ^ 0x5a5a5a5a);
  let counter = 0;
  const uid = (): string => hex8(mix32(++counter ^ S));
  const words = (h: number): string => `${pick(ADJ, h)}-${pick(NOUN, h >>> 8)}`;

  const orgs: Org[] = [];
  const programs: Program[] = [];
  const frameworks: Framework[] = [];
  const snapshots: Snapshot[] = [];
  const personal_org_ids: string[] = [];
  const lastMonth = Date.UTC(new Date(now).getUTCFullYear(), new Date(now).getUTCMonth() - 1, 11, 9, 23, 17);

  let currentMemberOrgs = 0;
  for (const [oi, spec] of scenarioOrgs(scenario).entries()) {
    const oh = hash(S, 1, oi);
    const org: Org = {
      id: `org-${words(oh)}-${uid()}`,
      name: `${pick(NOUN, oh >>> 4)} ${spec.billing === 'legacy' ? 'Legacy' : 'Labs'} ${oi + 1}`,
      billing: spec.billing,
      framework_data_start: FRAMEWORK_DATA_START,
    };
    orgs.push(org);
    if (spec.member) personal_org_ids.push(org.id);
    const firstCurrent = spec.billing === 'current' && spec.member && currentMemberOrgs++ === 0;

    for (let pi = 0; pi < spec.programs; pi++) {
      const ph = hash(S, 2, oi, pi);
      const key = hash(S, 3, oi, pi);
      let created = CREATED_FROM + (ph % Math.floor((CREATED_TO - CREATED_FROM) / 1000)) * 1000;
      let split = (ph & 0x10000) !== 0;
      let plans: { plan: Plan; start: number }[];
      if (spec.billing === 'current' && spec.member && (pi === 0 || (firstCurrent && pi === 1))) {
        // Monthly changers: one splits straddling buckets at 12:00 on the 15th, the other keeps them whole (06:00 on the 10th).
        created = EARLIEST_FROM + pi * DAY + 2 * HOUR + 17 * 60_000;
        const splitting = firstCurrent ? pi === 0 : currentMemberOrgs % 2 === 1;
        split = splitting;
        plans = splitting
          ? monthlyChanges(created, ['launch', 'scale'], 15, 12)
          : monthlyChanges(created, ['scale', 'launch'], 10, 6);
      } else if (spec.billing === 'legacy' && pi === 0) {
        created = EARLIEST_FROM + 5 * HOUR;
        split = true;
        plans = monthlyChanges(created, ['legacy_launch', 'legacy_scale'], 20, 9);
      } else {
        let plan: Plan;
        if (spec.billing === 'legacy')
          plan = pick(
            ['legacy_launch', 'legacy_launch', 'legacy_scale', 'legacy_scale', 'legacy_business'] as const,
            ph >>> 3,
          );
        else if (firstCurrent && pi === 2) plan = 'enterprise';
        else plan = pick(['free', 'launch', 'launch', 'scale', 'scale'] as const, ph >>> 3);
        plans = [{ plan, start: created }];
        if (plan !== 'enterprise' && (ph >>> 20) % 4 === 0) {
          // One change, on a whole hour that is not midnight.
          const at =
            Math.floor(created / DAY) * DAY + (30 + ((ph >>> 12) % 200)) * DAY + (1 + ((ph >>> 7) % 23)) * HOUR;
          const next: Plan =
            spec.billing === 'legacy'
              ? plan === 'legacy_scale'
                ? 'legacy_business'
                : 'legacy_scale'
              : plan === 'scale'
                ? 'launch'
                : plan === 'free'
                  ? 'launch'
                  : 'scale';
          plans.push({ plan: next, start: at });
        }
      }
      const periods: Period[] = plans.map((p, i) => {
        const next = plans[i + 1];
        return { period_id: `pd-${uid()}`, plan: p.plan, start: p.start, ...(next ? { end: next.start } : {}) };
      });
      const program: Program = {
        id: `${words(ph)}-${uid()}`,
        org_id: org.id,
        name: `${pick(NOUN, ph >>> 11)}-${pick(['prod', 'staging', 'audit', 'core', 'eu', 'us'], ph >>> 17)}-${pi + 1}`,
        region_id: pick(REGIONS, ph >>> 5),
        created_at: created,
        periods,
        split_at_plan_change: split,
        key,
        shape: (ph >>> 24) % 4,
      };
      // One program of each member organisation was deleted last month: it is still billed for it.
      if (spec.member && pi === 3 && lastMonth > created + DAY) program.deleted_at = lastMonth;
      programs.push(program);

      const nf =
        typeof spec.frameworks === 'number'
          ? spec.frameworks
          : spec.frameworks[0] + (ph % (spec.frameworks[1] - spec.frameworks[0] + 1));
      const own: Framework[] = [];
      for (let fi = 0; fi < nf; fi++) {
        const fh = hash(S, 4, key, fi);
        const [name, display] = FRAMEWORK_NAMES[fi % FRAMEWORK_NAMES.length] as [string, string];
        // 'large' keeps every framework inside recent windows (so 100 programs fill a 1,000-framework page).
        const spreadDays = scenario === 'large' ? 60 : 200;
        const fcreated =
          fi === 0 ? created : created + (1 + (fh % (spreadDays * 24))) * HOUR + ((fh >>> 13) % 3600) * 1000;
        const f: Framework = {
          id: `br-${words(fh)}-${uid()}`,
          program_id: program.id,
          name: fi < FRAMEWORK_NAMES.length ? name : `${name}-${fi}`,
          display_name: fi < FRAMEWORK_NAMES.length ? display : `${display} ${fi}`,
          created_at: fcreated,
          default: fi === 0,
          controls_total: 40 + (fh % 160),
          key: hash(S, 5, key, fi),
        };
        let deleted: number | undefined;
        if (scenario === 'large')
          deleted =
            fi > 0 && (fh >>> 24) % 10 === 0
              ? now - (1 + ((fh >>> 9) % 20)) * DAY - ((fh >>> 3) % 3600) * 1000
              : undefined;
        else
          deleted =
            fi > 0 && (fh >>> 24) % 4 === 0
              ? fcreated + (3 + ((fh >>> 9) % 90)) * DAY + ((fh >>> 3) % 3600) * 1000
              : undefined;
        if (program.deleted_at !== undefined && (deleted === undefined || deleted > program.deleted_at))
          deleted = program.deleted_at;
        if (deleted !== undefined) f.deleted_at = Math.max(deleted, fcreated + HOUR);
        own.push(f);
      }
      frameworks.push(...own);

      for (let si = 0; si < spec.snapshotsPerProgram; si++) {
        const sh = hash(S, 6, key, si);
        const source = own[sh % own.length] as Framework;
        const kind = si % 3; // 0 manual, 1 scheduled and live, 2 scheduled and already expired
        const createdAt = Math.max(
          created + HOUR,
          now - (kind === 2 ? 40 : 1 + (sh % 20)) * DAY - ((sh >>> 5) % 86400) * 1000,
        );
        const snap: Snapshot = {
          id: `snap-${uid()}`,
          program_id: program.id,
          name: kind === 0 ? `before-audit-${si + 1}` : `scheduled-${new Date(createdAt).toISOString().slice(0, 10)}`,
          source_branch_id: source.id,
          created_at: createdAt,
          manual: kind === 0,
        };
        if (kind !== 0) snap.expires_at = createdAt + 30 * DAY;
        snapshots.push(snap);
      }
    }
  }

  const orgById = new Map(orgs.map((o) => [o.id, o]));
  const programById = new Map(programs.map((p) => [p.id, p]));
  const frameworksByProgram = new Map<string, Framework[]>(programs.map((p) => [p.id, []]));
  for (const f of frameworks) frameworksByProgram.get(f.program_id)?.push(f);
  for (const list of frameworksByProgram.values()) list.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  const snapshotsByProgram = new Map<string, Snapshot[]>(programs.map((p) => [p.id, []]));
  for (const s of snapshots) snapshotsByProgram.get(s.program_id)?.push(s);

  if (scenario === 'bigint') {
    for (const p of programs) {
      if (orgById.get(p.org_id)?.billing !== 'current') continue;
      const fws = frameworksByProgram.get(p.id) ?? [];
      p.big_factor = {};
      for (const m of BYTE_MONTH_METRICS) p.big_factor[m] = bigFactor(programSeriesBases(p, fws, m));
    }
  }

  // The program-scoped key gets a plain program of the first current-plan member organisation.
  const scoped = programs.find(
    (p) =>
      orgById.get(p.org_id)?.billing === 'current' &&
      personal_org_ids.includes(p.org_id) &&
      p.periods.length === 1 &&
      !p.deleted_at,
  );
  const keyHex = (n: number): string => hex8(hash(S, 7, n)) + hex8(hash(S, 8, n));
  const keys: SandboxKeys = {
    personal: `sbx_personal_${keyHex(0)}`,
    org: Object.fromEntries(orgs.map((o, i) => [o.id, `sbx_org_${keyHex(i + 1)}`])),
    program: { programId: scoped?.id ?? '', key: `sbx_program_${keyHex(1000)}` },
  };

  const world: World = {
    seed,
    scenario,
    generated_at: now,
    orgs,
    programs,
    frameworks,
    snapshots,
    framework_data_start: FRAMEWORK_DATA_START,
    personal_org_ids,
    keys,
    orgById,
    programById,
    frameworksByProgram,
    snapshotsByProgram,
    spendingLimits: new Map(),
  };
  if (opts.events) world.labels = applyEvents(world);
  return world;
}

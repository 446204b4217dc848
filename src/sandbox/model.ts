// The shapes of the sandbox's entities, apart from their generation (world.ts) so that the usage
// model (usage.ts) can read them without importing the generator that imports it.
import type { V2Metric } from '../contract/api.js';

export type Scenario = 'small' | 'medium' | 'large' | 'bigint';
export const SCENARIOS: readonly Scenario[] = ['small', 'medium', 'large', 'bigint'];
export type Billing = 'current' | 'legacy';
export type Plan = 'free' | 'launch' | 'scale' | 'enterprise' | 'legacy_launch' | 'legacy_scale' | 'legacy_business';

export interface Org {
  id: string;
  name: string;
  billing: Billing;
  /** Framework-level usage exists only from here on (the account's first ingest). */
  framework_data_start: number;
}

/** A stretch of one plan; the first starts at the program's creation, later ones at a plan change. */
export interface Period {
  period_id: string;
  plan: Plan;
  start: number;
  end?: number;
}

export interface Program {
  id: string;
  org_id: string;
  name: string;
  region_id: string;
  created_at: number;
  deleted_at?: number;
  periods: Period[];
  /** At a plan change, whether a straddling bucket's timeframe is cut at the change or kept whole in each period. */
  split_at_plan_change: boolean;
  /** Seed of this program's value series. */
  key: number;
  /** Index of its 24-hour usage shape (shared by its frameworks). */
  shape: number;
  /** Scenario 'bigint': multiplier of each byte-month metric, so hourly values pass 2^53. */
  big_factor?: Partial<Record<V2Metric, bigint>>;
  /** Labelled events (events.ts): what happens to every series of the program on some days. */
  events?: ProgramEvents;
}

/** Day numbers are days since the epoch (UTC). */
export interface ProgramEvents {
  /** Day -> integer multiplier of that day's usage (a spike of known size). */
  spikes?: ReadonlyMap<number, number>;
  /** No usage before this day; from it on, usage multiplied by startFactor (a program that starts spending). */
  startDay?: number;
  startFactor?: number;
  /** From fromDay on, usage grows by permillePerDay per mille a day (a slow drift that must not alert). */
  drift?: { fromDay: number; permillePerDay: number };
}

export interface Framework {
  id: string;
  program_id: string;
  name: string;
  display_name: string;
  created_at: number;
  deleted_at?: number;
  default: boolean;
  controls_total: number;
  key: number;
}

export interface Snapshot {
  id: string;
  program_id: string;
  name: string;
  source_branch_id: string;
  created_at: number;
  manual: boolean;
  expires_at?: number;
}

export interface SandboxKeys {
  personal: string;
  org: Record<string, string>;
  program: { programId: string; key: string };
}

export interface World {
  seed: number;
  scenario: Scenario;
  /** The clock value the world was generated at ("last month" etc. are relative to it). */
  generated_at: number;
  orgs: Org[];
  programs: Program[];
  frameworks: Framework[];
  snapshots: Snapshot[];
  /** The current-plan organisations' framework_data_start (all share it). */
  framework_data_start: number;
  /** Organisations the personal key is a member of. */
  personal_org_ids: string[];
  keys: SandboxKeys;
  orgById: Map<string, Org>;
  programById: Map<string, Program>;
  /** Every framework of a program, deleted ones included, ordered by id. */
  frameworksByProgram: Map<string, Framework[]>;
  snapshotsByProgram: Map<string, Snapshot[]>;
  /** Organization id -> monthly spending limit in cents (GET .../billing/spending_limit), or the status it answers instead. */
  spendingLimits: Map<string, { cents: number } | { status: 403 | 404 }>;
  /** The labelled events, when the world has them (events.ts). */
  labels?: Labels;
}

/** A world's labelled events (events.ts), as its truth lists them. */
export interface Labels {
  spikes: { program_id: string; org_id: string; day: string; factor: number }[];
  starts: { program_id: string; org_id: string; day: string; factor: number }[];
  drifts: { program_id: string; org_id: string; from: string; permille_per_day: number }[];
  spending_limits: { org_id: string; cents: number | null; status: 200 | 403 | 404 }[];
}

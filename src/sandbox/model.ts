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
}

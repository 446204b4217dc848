// Labelled events of a sandbox world (generateWorld({ events: true })): spikes of known size on known
// program-days, programs that start spending, a slow drift that must not alert, and organization
// spending limits. The truth (truth.ts labelledEvents) lists them, so an anomaly detector can be
// scored against them; a world without events is quiet.
import { hash } from './hash.js';
import type { Labels, Program, World } from './model.js';

export type { Labels } from './model.js';

const DAY = 86_400_000;
/** Spike multipliers, in turn: mostly 3x and more (what a detector must find); 2x is labelled but milder. */
const SPIKE_FACTORS = [3, 4, 6, 2, 5, 8, 3, 4];

const iso = (day: number) => new Date(day * DAY).toISOString().slice(0, 10);

/** Programs an event may be given: current billing, a member organization, one plan, not deleted, priced plan. */
function eligible(world: World): Program[] {
  return world.programs
    .filter((p) => {
      const org = world.orgById.get(p.org_id);
      return (
        org?.billing === 'current' &&
        world.personal_org_ids.includes(p.org_id) &&
        p.periods.length === 1 &&
        p.deleted_at === undefined &&
        (p.periods[0]?.plan === 'scale' || p.periods[0]?.plan === 'launch')
      );
    })
    .sort((a, b) => hash(world.seed, 9, a.key) - hash(world.seed, 9, b.key));
}

/**
 * Gives the world its events, relative to the day it was generated at: spikes over the 110 days before
 * (about one program in five, one spike each, at least a week apart per program), two programs that
 * start spending within the last month, two that drift up by 1% a day, and spending limits (the first
 * current organization has one, the second answers 403, the others 404).
 */
export function applyEvents(world: World): Labels {
  const today = Math.floor(world.generated_at / DAY);
  const pool = eligible(world);
  const labels: Labels = { spikes: [], starts: [], drifts: [], spending_limits: [] };
  const nSpikes = Math.max(4, Math.min(40, Math.floor(pool.length / 5)));
  let i = 0;
  for (const p of pool.slice(0, nSpikes)) {
    const day = today - 6 - ((i * 37) % 100);
    const factor = SPIKE_FACTORS[i % SPIKE_FACTORS.length]!;
    p.events = { spikes: new Map([[day, factor]]) };
    labels.spikes.push({ program_id: p.id, org_id: p.org_id, day: iso(day), factor });
    i++;
  }
  for (const [j, p] of pool.slice(nSpikes, nSpikes + 2).entries()) {
    const day = today - 30 + 9 * j;
    p.events = { startDay: day, startFactor: 4 };
    labels.starts.push({ program_id: p.id, org_id: p.org_id, day: iso(day), factor: 4 });
  }
  for (const p of pool.slice(nSpikes + 2, nSpikes + 4)) {
    p.events = { drift: { fromDay: today - 110, permillePerDay: 10 } };
    labels.drifts.push({ program_id: p.id, org_id: p.org_id, from: iso(today - 110), permille_per_day: 10 });
  }
  const current = world.orgs.filter((o) => o.billing === 'current' && world.personal_org_ids.includes(o.id));
  for (const org of world.orgs) {
    const at = current.indexOf(org);
    if (at === 0) {
      world.spendingLimits.set(org.id, { cents: 2_000_000 });
      labels.spending_limits.push({ org_id: org.id, cents: 2_000_000, status: 200 });
    } else {
      const status = at === 1 ? 403 : 404;
      world.spendingLimits.set(org.id, { status });
      labels.spending_limits.push({ org_id: org.id, cents: null, status });
    }
  }
  return labels;
}

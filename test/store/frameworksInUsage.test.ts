// The frameworks the stored usage of a window's granularity names per program since the window's start: what
// sizes the collector's frameworks requests when the inventory does not know them.
import { beforeEach, describe, expect, it } from 'vitest';
import type { Store } from '../../src/store/store.js';
import { at, hourlyRows, load, spec, useTempStore } from '../support/store.js';

const currentStore = useTempStore();
let store: Store;
beforeEach(() => {
  store = currentStore();
});

const frameworksSpec = (org: string, granularity: 'hourly' | 'daily', from: number, to: number) =>
  spec({
    table: 'usage_framework',
    apiVersion: undefined,
    granularity,
    windowStart: at(from),
    windowEnd: at(to),
    scope: { orgId: org },
    coverage: { source: 'v2_frameworks', scope: org, status: 'complete' },
  });

describe('frameworksInUsageByProgram', () => {
  it("counts each program's distinct frameworks with a bucket of the granularity at or after the window's start, in its organization only", async () => {
    // org-1, hours 0-24: p1-main and p1-dev all day; p1-gone only until hour 6 (deleted before the window at
    // hour 12); p2-main from hour 12 exactly.
    await load(store, frameworksSpec('org-1', 'hourly', 0, 24), [
      ...hourlyRows({ programs: ['p1'], fromHour: 0, toHour: 24, frameworks: () => ['p1-main', 'p1-dev'] }),
      ...hourlyRows({ programs: ['p1'], fromHour: 0, toHour: 6, frameworks: () => ['p1-gone'] }),
      ...hourlyRows({ programs: ['p2'], fromHour: 12, toHour: 24, frameworks: () => ['p2-main'] }),
    ]);
    // A daily bucket of the same organization names p1-main and p1-new: counted for daily windows only.
    await load(
      store,
      frameworksSpec('org-1', 'daily', 0, 24),
      hourlyRows({ programs: ['p1'], fromHour: 12, toHour: 13, frameworks: () => ['p1-main', 'p1-new'] }),
    );
    await load(
      store,
      frameworksSpec('org-2', 'hourly', 0, 24),
      hourlyRows({ org: 'org-2', programs: ['q1'], fromHour: 0, toHour: 24, frameworks: () => ['q1-main'] }),
    );

    const hourly = async (org: string, from: number) =>
      Object.fromEntries(await store.usage.frameworksByProgram(org, 'hourly', at(from)));
    expect(await hourly('org-1', 12)).toEqual({ p1: 2, p2: 1 });
    expect(await hourly('org-1', 0)).toEqual({ p1: 3, p2: 1 });
    expect(await hourly('org-1', 24)).toEqual({});
    expect(await hourly('org-2', 12)).toEqual({ q1: 1 });
    expect(Object.fromEntries(await store.usage.frameworksByProgram('org-1', 'daily', at(12)))).toEqual({ p1: 2 });
    expect((await store.usage.frameworksByProgram('org-1', 'daily', at(13))).size).toBe(0);
  });
});

// The order test files start in: the costliest first, whatever their project, so that the last file to
// start is a short one and the workers finish together (the longest file alone sets the run's floor).
// Cost is vitest's own record of each file's last duration (its results cache, kept between local runs),
// else the committed record (costs.json, written by `npm run test:costs`: a fresh clone and CI have no
// cache); a file neither knows counts as an average one, the integration files first, the larger first.
import { readFileSync } from 'node:fs';
import { relative } from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

const COMMITTED = new Map(
  Object.entries(
    (JSON.parse(readFileSync(new URL('./costs.json', import.meta.url), 'utf8')) as { seconds: Record<string, number> })
      .seconds,
  ).map(([key, s]) => [key, s * 1000]),
);

export default class CostSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const { cache, config } = this.ctx;
    const key = (s: TestSpecification) => `${s.project.name}:${relative(config.root, s.moduleId)}`;
    const recorded = new Map(
      files.map((f) => [f, cache.getFileTestResults(key(f))?.duration ?? COMMITTED.get(key(f))]),
    );
    const known = [...recorded.values()].filter((d): d is number => d !== undefined);
    const average = known.length ? known.reduce((a, b) => a + b, 0) / known.length : 0;
    const cost = (s: TestSpecification): [number, number, number] => [
      recorded.get(s) ?? average,
      s.project.name === 'integration' ? 1 : 0,
      cache.getFileStats(key(s))?.size ?? 0,
    ];
    const costs = new Map(files.map((f) => [f, cost(f)]));
    return [...files].sort((a, b) => {
      const [ca, ia, sa] = costs.get(a)!;
      const [cb, ib, sb] = costs.get(b)!;
      return cb - ca || ib - ia || sb - sa;
    });
  }
}

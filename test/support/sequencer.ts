// The order test files start in: the costliest first, whatever their project, so that the last file to
// start is a short one and the workers finish together (the longest file alone sets the run's floor).
// Cost is vitest's own record of each file's last duration (its results cache, kept between local runs);
// a file it has no record of counts as an average one. With no record at all (a first run, CI), the
// integration files start first, the larger first.
import { relative } from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

export default class CostSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const { cache, config } = this.ctx;
    const key = (s: TestSpecification) => `${s.project.name}:${relative(config.root, s.moduleId)}`;
    const recorded = new Map(files.map((f) => [f, cache.getFileTestResults(key(f))?.duration]));
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

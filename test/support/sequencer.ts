// The order test files start in: the costliest first, whatever their project, so that the last file to
// start is a short one and the workers finish together (the longest file alone sets the run's floor).
// Cost is vitest's own record of each file's last duration (its results cache, kept between local runs);
// a file it has no record of counts as costly (an integration file before a unit file, the larger first),
// which is also the order of a first run, where nothing is recorded.
import { relative } from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/** Far above any recorded duration: files without a record start first. */
const UNKNOWN_MS = 1e9;

export default class CostSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const { cache, config } = this.ctx;
    const cost = (s: TestSpecification): [number, number] => {
      const key = `${s.project.name}:${relative(config.root, s.moduleId)}`;
      const recorded = cache.getFileTestResults(key)?.duration;
      const integration = s.project.name === 'integration' ? 1 : 0;
      return [recorded ?? UNKNOWN_MS + integration, cache.getFileStats(key)?.size ?? 0];
    };
    const costs = new Map(files.map((f) => [f, cost(f)]));
    return [...files].sort((a, b) => {
      const [ca, sa] = costs.get(a)!;
      const [cb, sb] = costs.get(b)!;
      return cb - ca || sb - sa;
    });
  }
}

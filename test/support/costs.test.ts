// The committed record of test costs (costs.json, `npm run test:costs`), which orders a run with no
// record of its own: each entry names a test file that exists, under the project that runs it, with a
// duration; a renamed or removed file must leave it rather than linger.
import { existsSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

const { seconds } = JSON.parse(readFileSync(new URL('./costs.json', import.meta.url), 'utf8')) as {
  seconds: Record<string, number>;
};

describe('the committed test costs', () => {
  it('name existing test files under their own project, each with a duration in seconds', () => {
    const entries = Object.entries(seconds);
    expect(entries.length).toBeGreaterThan(50);
    for (const [key, s] of entries) {
      const [project, path] = key.split(':') as [string, string];
      expect(existsSync(path), `${key}: no such file; run npm run test:costs`).toBe(true);
      expect(project, key).toBe(path.endsWith('.int.test.ts') ? 'integration' : 'unit');
      expect(s, key).toBeGreaterThanOrEqual(0);
    }
  });
});

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { sealsMonth } from '../../src/app/collect.js';
import { commandContext } from '../../src/app/context.js';
import { silentLogger } from '../../src/log.js';

const dirs: string[] = [];
afterEach(() => dirs.splice(0).forEach((d) => rmSync(d, { recursive: true, force: true })));

function ctxWith(toml: string) {
  const dir = mkdtempSync(join(tmpdir(), 'seal-'));
  dirs.push(dir);
  writeFileSync(join(dir, 'usage.toml'), toml);
  return commandContext({
    db: join(dir, 'usage.duckdb'),
    cwd: dir,
    env: {},
    log: silentLogger,
    config: join(dir, 'usage.toml'),
  });
}

describe('which collect seals an hourly month of the analyst copy', () => {
  it('the daily job and a collect of every granularity do; the hourly job does not, unless hours are all there is', () => {
    const all = ctxWith('');
    expect(sealsMonth(all, {})).toBe(true);
    expect(sealsMonth(all, { granularities: ['daily', 'monthly'] })).toBe(true);
    expect(sealsMonth(all, { granularities: ['hourly'] })).toBe(false);
    const hoursOnly = ctxWith('[collect]\ngranularities = ["hourly"]\n');
    expect(sealsMonth(hoursOnly, {})).toBe(true);
    expect(sealsMonth(hoursOnly, { granularities: ['hourly'] })).toBe(true);
  });
});

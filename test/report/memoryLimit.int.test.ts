// A report under a deliberately tiny DuckDB memory limit fails cleanly: exit 1 naming the config keys
// to raise (not DuckDB's own SET advice), and the month's report files exactly as they were.
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { cli, errorMessage } from '../support/cli.js';
import { loadMonthFile } from '../support/month.js';

const MONTH = '2025-10';
const BOOK = 'config/prices.toml';

/** Every file of the month's folder with its sha256. */
function snapshot(monthDir: string): Record<string, string> {
  const files = readdirSync(monthDir).sort();
  return Object.fromEntries(
    files.map((f) => [
      f,
      createHash('sha256')
        .update(readFileSync(join(monthDir, f)))
        .digest('hex'),
    ]),
  );
}

describe('report under a tiny report.memory_limit', () => {
  let dir: string;
  let db: string;
  const out = () => join(dir, 'reports');
  const args = (config: string) => [
    'report',
    '--config',
    config,
    '--month',
    MONTH,
    '--db',
    db,
    '--out',
    out(),
    '--prices',
    BOOK,
    '--format',
    'parquet,xlsx',
  ];

  beforeAll(async () => {
    ({ dir, db } = await loadMonthFile(MONTH));
  });

  it("exits 1 naming report.memory_limit, and leaves the month's files as they were", async () => {
    const normal = join(dir, 'normal.toml');
    writeFileSync(normal, '[report]\nmemory_limit = "256MB"\n');
    const first = await cli(args(normal));
    expect(first.code, first.stderr).toBe(0);
    const monthDir = join(out(), MONTH);
    const before = snapshot(monthDir);
    expect(Object.keys(before)).toContain('program_spend.parquet');

    const tiny = join(dir, 'tiny.toml');
    writeFileSync(tiny, '[report]\nmemory_limit = "1MB"\n');
    const r = await cli(args(tiny));
    expect(r.code, r.stdout + r.stderr).toBe(1);
    const message = errorMessage(r.stderr) ?? r.stderr;
    expect(message).toContain('ran out of DuckDB memory');
    expect(message).toContain('report.memory_limit = 1MB');
    expect(message).toContain('raise report.memory_limit');
    expect(message).not.toContain('SET memory_limit');
    expect(snapshot(monthDir)).toEqual(before);

    // The database is untouched by the failed run: the next report at a normal limit writes the same files.
    const again = await cli(args(normal));
    expect(again.code, again.stderr).toBe(0);
    const after = snapshot(monthDir);
    expect(after['program_spend.parquet']).toBe(before['program_spend.parquet']);
    expect(Object.keys(after)).toEqual(Object.keys(before));
  });
});

// Every .sql file has a caller: each one beside its owner is named literally (never built from a
// template string) in that owner's TypeScript, so a search for the file name finds who runs it. The
// migrations and the analysts' examples are read by directory, by the migration runner and the demo test.
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { listMigrations, SCHEMA_DIR } from '../src/store/migrations.js';

const REPO = join(import.meta.dirname, '..');

function filesUnder(dir: string, suffix: string): string[] {
  return readdirSync(join(REPO, dir), { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith(suffix))
    .map((f) =>
      relative(REPO, join(REPO, dir, f))
        .split('\\')
        .join('/'),
    )
    .sort();
}

describe('SQL files', () => {
  const code = [...filesUnder('src', '.ts'), ...filesUnder('bench', '.ts')]
    .map((f) => readFileSync(join(REPO, f), 'utf8'))
    .join('\n');

  it.each(filesUnder('src', '.sql'))('%s is named literally by the code that runs it', (file) => {
    expect(code.includes(`'${file}'`)).toBe(true);
  });

  it('bench/baseline.sql is named by the bench that runs it', () => {
    expect(code.includes("'./baseline.sql'")).toBe(true);
  });

  it('every migration file is one the runner applies', () => {
    const applied = listMigrations()
      .map((m) => m.file)
      .sort();
    expect(applied).toEqual(filesUnder(SCHEMA_DIR, '.sql'));
  });

  it('no SQL file is left in a folder without an owner', () => {
    const loose = filesUnder('queries', '.sql').filter(
      (f) => !f.startsWith(`${SCHEMA_DIR}/`) && !f.startsWith('queries/examples/'),
    );
    expect(loose).toEqual([]);
  });
});

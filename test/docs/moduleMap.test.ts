// ARCHITECTURE.md's module map names every folder and file at the top of src/, and nothing that is not there:
// a room added or removed without the map saying so fails here.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const REPO = join(import.meta.dirname, '../..');

/** The names the module map's `src/` block lists at its first level: `name/` folders and `name.ts` files. */
export function mapEntries(architecture: string): string[] {
  const block = /## Module map\s+```\n([\s\S]*?)```/.exec(architecture)?.[1] ?? '';
  const lines = block.split('\n');
  const start = lines.indexOf('src/');
  const names: string[] = [];
  for (const line of lines.slice(start + 1)) {
    if (!line.startsWith('  ') || line.startsWith('   ')) {
      if (!line.startsWith(' ')) break;
      continue;
    }
    const head = /^ {2}(.+?)(?: {2,}|$)/.exec(line)?.[1] ?? '';
    for (const n of head.split(', ')) names.push(n.replace(/\/$/, ''));
  }
  return names.sort();
}

describe('ARCHITECTURE.md, module map', () => {
  it('reads the entries of a map', () => {
    const doc =
      '## Module map\n\n```\nsrc/\n  app/        the root\n              more\n  a.ts, b.ts   files\nqueries/   x\n```\n';
    expect(mapEntries(doc)).toEqual(['a.ts', 'app', 'b.ts']);
  });

  it('lists exactly the folders and files of src/', () => {
    const onDisk = readdirSync(join(REPO, 'src')).sort();
    expect(mapEntries(readFileSync(join(REPO, 'ARCHITECTURE.md'), 'utf8'))).toEqual(onDisk);
  });
});

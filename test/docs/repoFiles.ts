// The repository's own files, walked from the folders named, for tests that read the source as text.
import { readdirSync, statSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';

export const REPO = resolve(import.meta.dirname, '../..');

/** Never the repository's own text: installed, built, generated or scratch. */
const SKIP = new Set(['node_modules', 'dist', '.git', '.bench', '.venv', '.scratch', 'data', 'reports']);

/** Repository-relative paths (with '/') of the files under each of `roots` (folders or files), sorted. */
export function repoFiles(roots: readonly string[]): string[] {
  const out: string[] = [];
  const walk = (abs: string): void => {
    if (statSync(abs).isDirectory()) {
      for (const e of readdirSync(abs)) if (!SKIP.has(e)) walk(join(abs, e));
    } else {
      out.push(relative(REPO, abs).split('\\').join('/'));
    }
  };
  for (const r of roots) walk(join(REPO, r));
  return out.sort();
}

/** The 1-based line of a character offset. */
export function lineOf(text: string, index: number | undefined): number {
  return text.slice(0, index ?? 0).split('\n').length;
}

// Comments and docs that name a repository file stay true only if something checks them: every
// path named in the source, tests, benches, scripts and docs must exist (a glob or a placeholder is
// not a path and is skipped). A failure lists each missing path with file:line.
import { readFileSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO, lineOf, repoFiles } from './repoFiles.js';

const SCANNED = [
  'src',
  'bench',
  'test',
  'docs',
  'deploy',
  'queries',
  'scripts',
  'config',
  'ARCHITECTURE.md',
  'README.md',
  'BENCHMARKS.md',
  'vitest.config.ts',
  'package.json',
  '.dependency-cruiser.cjs',
];
const TEXT = /\.(?:ts|mjs|cjs|js|sql|md|toml|json|py|txt|service|timer|rules|yml|yaml|sh)$|\/cron\//;
/** Top-level folders: a path starting with one is read from the repository root. */
const ROOTS = 'src|bench|test|docs|deploy|queries|scripts|config';
/** A rooted path, a relative path to a source file (`store/sql/x.sql`), or a top-level doc by name. */
const ROOTED = new RegExp(`(?<![\\w./@$-])(?:${ROOTS})/[\\w.@-]+(?:/[\\w.@-]+)*/?`, 'g');
const RELATIVE = new RegExp(
  `(?<![\\w./@$-])(?!(?:${ROOTS})/)[a-z][\\w-]*(?:/[\\w.-]+)+\\.(?:ts|sql|mjs|cjs|py)\\b`,
  'g',
);
const DOC = /(?<![\w./-])[A-Z][A-Z_]+\.md\b/g;
/** After a path, these make it a pattern or a template rather than a file. */
const PLACEHOLDER = /^[*{<$`'"]?[*{<$[…]|^\$\{/;

export interface Missing {
  path: string;
  at: string;
}

/** The repository as a set of paths: every file and every folder above one. */
export function pathSet(files: readonly string[]): Set<string> {
  const all = new Set<string>();
  for (const f of files) {
    const parts = f.split('/');
    for (let i = 1; i <= parts.length; i++) all.add(parts.slice(0, i).join('/'));
  }
  return all;
}

/** Whether a path named in `file` exists: rooted, beside `file`, or (a relative path) as the tail of some file's path. */
function found(repo: ReadonlySet<string>, file: string, path: string, kind: 'rooted' | 'relative' | 'doc'): boolean {
  const bare = path.replace(/\/$/, '');
  const has = (p: string): boolean => repo.has(p) || repo.has(`${p}.ts`);
  if (kind === 'rooted') return has(bare);
  if (has(normalize(join(dirname(file), bare))) || has(bare)) return true;
  if (kind === 'doc') return has(`docs/${bare}`);
  return [...repo].some((p) => p.endsWith(`/${bare}`));
}

/** Code's text with everything but its comments blanked (lines kept), so paths built or quoted in code are not read. */
export function commentsOf(file: string, text: string): string {
  if (/\.(?:md|txt|toml|service|timer|rules|yml|yaml)$|\/cron\//.test(file)) return text;
  // Strings are matched first so that a `//` or `--` inside one does not start a comment.
  const re = file.endsWith('.sql')
    ? /'(?:[^'\n])*'|--[^\n]*/g
    : file.endsWith('.py') || file.endsWith('.sh')
      ? /'(?:[^'\\\n]|\\.)*'|"(?:[^"\\\n]|\\.)*"|#[^\n]*/g
      : /'(?:[^'\\\n]|\\.)*'|"(?:[^"\\\n]|\\.)*"|`(?:[^`\\]|\\.)*`|\/\*[\s\S]*?\*\/|\/\/[^\n]*/g;
  let out = '';
  let at = 0;
  for (const m of text.matchAll(re)) {
    const comment = !/^['"`]/.test(m[0]);
    out += text.slice(at, m.index).replace(/[^\n]/g, ' ') + (comment ? m[0] : m[0].replace(/[^\n]/g, ' '));
    at = m.index + m[0].length;
  }
  return out + text.slice(at).replace(/[^\n]/g, ' ');
}

/** Each path named in `text` (the file `file`, comments only if code) that is not in `repo`. */
export function missingPaths(file: string, text: string, repo: ReadonlySet<string>): Missing[] {
  const out: Missing[] = [];
  const comments = commentsOf(file, text);
  const scan = (re: RegExp, kind: 'rooted' | 'relative' | 'doc'): void => {
    for (const m of comments.matchAll(re)) {
      const after = comments.slice(m.index + m[0].length, m.index + m[0].length + 2);
      // A sentence's full stop is not part of the name.
      const path = m[0].replace(/[.]+$/, '');
      if (PLACEHOLDER.test(after) || /\.\.\.|XX|YYYY/.test(path)) continue;
      if (!found(repo, file, path, kind)) out.push({ path, at: `${file}:${lineOf(comments, m.index)}` });
    }
  };
  scan(ROOTED, 'rooted');
  scan(RELATIVE, 'relative');
  scan(DOC, 'doc');
  return out;
}

/** A section of BENCHMARKS.md cited by its title: `BENCHMARKS.md, "Title"` (the title may wrap onto comment lines). */
const CITATION = /BENCHMARKS\.md`?,?\s*"([^"]{1,300})"/g;

/** The headings of a Markdown text, without their #s. */
export function headings(markdown: string): string[] {
  return [...markdown.matchAll(/^#{1,6}\s+(.+?)\s*$/gm)].map((m) => m[1] ?? '');
}

/** Each BENCHMARKS.md section cited in `file` (comments only if code) that is not a heading, nor a heading without its "(date)". */
export function missingSections(file: string, text: string, titles: readonly string[]): Missing[] {
  const known = new Set(titles.flatMap((t) => [t, t.replace(/\s*\(\d{4}-\d\d-\d\d\)$/, '')]));
  const comments = commentsOf(file, text);
  const out: Missing[] = [];
  for (const m of comments.matchAll(CITATION)) {
    const title = (m[1] ?? '').replace(/\s*\n\s*(?:\/\/|\*|--|#)?\s*/g, ' ').trim();
    if (!known.has(title)) out.push({ path: `BENCHMARKS.md, "${title}"`, at: `${file}:${lineOf(comments, m.index)}` });
  }
  return out;
}

describe('paths and sections named in comments and docs', () => {
  it('finds a path that does not exist, and skips patterns and placeholders', () => {
    const repo = pathSet([
      'src/store/store.ts',
      'src/store/sql/a.sql',
      'src/store/facade/context.ts',
      'src/store/report/sql/b.sql',
      'src/report/sql/b.sql',
      'README.md',
      'docs/SCALING.md',
    ]);
    const text = [
      '// see src/store/store.ts and src/store/gone.ts, src/store/facade/ and src/store',
      "const p = 'src/string/only.ts'; // sql/a.sql beside it; facade/context.ts, a file's tail",
      "/* report/sql/c.sql is no file's tail; README.md and SCALING.md; NOTES.md is not */ const u = 'https://x.org/a/b.ts';",
      '// src/store/*.ts, test/<area>/x.ts, src/${name}.ts, https://example.com/a/b.ts',
    ].join('\n');
    expect(missingPaths('src/store/x.ts', text, repo)).toEqual([
      { path: 'src/store/gone.ts', at: 'src/store/x.ts:1' },
      { path: 'report/sql/c.sql', at: 'src/store/x.ts:3' },
      { path: 'NOTES.md', at: 'src/store/x.ts:3' },
    ]);
  });

  it('every repository path named in the source, tests and docs exists', () => {
    const files = repoFiles(SCANNED).filter((f) => TEXT.test(f) && f !== 'test/docs/paths.test.ts');
    expect(files.length).toBeGreaterThan(100);
    const repo = pathSet(repoFiles(['.']));
    const missing = files.flatMap((f) => missingPaths(f, readFileSync(join(REPO, f), 'utf8'), repo));
    expect(missing.map((m) => `${m.at} names ${m.path}, which does not exist`)).toEqual([]);
  });
  it('finds a cited section that BENCHMARKS.md does not have', () => {
    const titles = headings('# Benchmarks\n\n## How to run\n\n### Pages scanned (2026-11-23)\n');
    const text = [
      '// see BENCHMARKS.md, "How to run", and (BENCHMARKS.md, "Pages scanned (2026-11-23)"); BENCHMARKS.md "Pages',
      '// scanned".',
      '/* (BENCHMARKS.md, "Where the time',
      ' * goes"). */',
    ].join('\n');
    expect(missingSections('src/x.ts', text, titles)).toEqual([
      { path: 'BENCHMARKS.md, "Where the time goes"', at: 'src/x.ts:3' },
    ]);
  });

  it('every section of BENCHMARKS.md cited in the source, tests and docs exists', () => {
    const titles = headings(readFileSync(join(REPO, 'BENCHMARKS.md'), 'utf8'));
    const files = repoFiles(SCANNED).filter((f) => TEXT.test(f) && f !== 'test/docs/paths.test.ts');
    const missing = files.flatMap((f) => missingSections(f, readFileSync(join(REPO, f), 'utf8'), titles));
    expect(missing.map((m) => `${m.at} cites ${m.path}, which is not a heading there`)).toEqual([]);
  });
});

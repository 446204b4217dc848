// The test projects are chosen by file name (vitest.config.ts): a test that starts a child process or
// opens a socket must be named *.int.test.ts, or it runs among the unit tests, without the built CLI
// and the tools the integration setup provides. This holds every other test file to that.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { REPO, repoFiles, lineOf } from './repoFiles.js';

/** What only an integration test may do: import process or network modules, or call what starts them. */
const FORBIDDEN: readonly { what: string; re: RegExp }[] = [
  {
    what: 'imports a process or network module',
    re: /(?:from\s*|import\(\s*)['"](?:node:)?(?:child_process|net|http|https|http2|dgram|tls)['"]/g,
  },
  {
    what: 'imports a test helper that starts processes or servers',
    re: /(?:from\s*|import\(\s*)['"][./]*(?:support\/)?(?:cli|fixture|child|hostile-server|sandboxClient|chromium|python)\.js['"]/g,
  },
  { what: 'imports the sandbox server', re: /(?:from\s*|import\(\s*)['"][./]*src\/sandbox\/server\.js['"]/g },
  {
    what: 'starts a process or a server (the demo runs the sandbox), or sends a request',
    re: /(?<![.\w])(?:startSandbox|startCli|startHostileServer|demoCommand|spawn|spawnSync|execFile|execFileSync|execSync|fork|fetch)\(/g,
  },
];

/** file:line and what it does, for each forbidden use in a test file's text. */
export function processOrSocketUses(file: string, text: string): string[] {
  const found: string[] = [];
  for (const { what, re } of FORBIDDEN) {
    for (const m of text.matchAll(re)) found.push(`${file}:${lineOf(text, m.index)} ${what}: ${m[0]}`);
  }
  return found;
}

describe('the test layout', () => {
  it('finds a process started in a unit test', () => {
    const text = "import { x } from 'vitest';\nimport { spawn } from 'node:child_process';\nspawn('node', []);\n";
    expect(processOrSocketUses('test/x/y.test.ts', text)).toEqual([
      "test/x/y.test.ts:2 imports a process or network module: from 'node:child_process'",
      'test/x/y.test.ts:3 starts a process or a server (the demo runs the sandbox), or sends a request: spawn(',
    ]);
    expect(processOrSocketUses('t', 'const m = /a/.exec(s); const r = fetchRows(db);\n')).toEqual([]);
  });

  it('names every test that starts a process or opens a socket *.int.test.ts', () => {
    // This file's own examples are text, not calls.
    const units = repoFiles(['test']).filter(
      (f) => f.endsWith('.test.ts') && !f.endsWith('.int.test.ts') && f !== 'test/docs/layout.test.ts',
    );
    expect(units.length).toBeGreaterThan(20);
    const uses = units.flatMap((f) => processOrSocketUses(f, readFileSync(`${REPO}/${f}`, 'utf8')));
    expect(uses, 'rename these to *.int.test.ts (or move the work into one)').toEqual([]);
  });
});

// The lint rules are real: each file that breaks one fails `eslint` and `prettier --check` with the project's own
// configuration, and the same file put right passes. The probes live in a folder of their own beside a copy of the
// configuration, so the repository is never written to; one eslint run lints them all (a run builds one program).
import { execFile } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';
import { REPO } from '../support/child.js';

const run = promisify(execFile);
const ESLINT = join(REPO, 'node_modules/eslint/bin/eslint.js');
const PRETTIER = join(REPO, 'node_modules/prettier/bin/prettier.cjs');

const SAVE = `async function save(): Promise<number> {\n  return 1;\n}\n`;
const sw = (cases: string) => `export function n(k: 'a' | 'b'): number {\n  switch (k) {\n${cases}  }\n}\n`;
const long = (n: number) =>
  `export function long(): number {\n  let x = 0;\n${'  x += 1;\n'.repeat(n)}  return x;\n}\n`;

/** Each probe broken (`bad`) and put right (`good`), with the rule the broken one must fail. */
const PROBES: Record<string, { rule: string; bad: string; good: string }> = {
  floating: {
    rule: '@typescript-eslint/no-floating-promises',
    bad: `${SAVE}export function run(): void {\n  save();\n}\n`,
    good: `${SAVE}export async function run(): Promise<void> {\n  await save();\n}\n`,
  },
  discarded: {
    rule: '@typescript-eslint/no-empty-function',
    bad: `${SAVE}export function run(): void {\n  save().catch(() => {});\n}\n`,
    good: `${SAVE}export function run(): void {\n  save().catch(() => {\n    // nothing to undo: a probe\n  });\n}\n`,
  },
  switch: {
    rule: '@typescript-eslint/switch-exhaustiveness-check',
    bad: sw(`    case 'a':\n      return 1;\n`),
    good: sw(`    case 'a':\n      return 1;\n    case 'b':\n      return 2;\n`),
  },
  long: { rule: 'max-lines-per-function', bad: long(77), good: long(76) },
};

type EslintResult = { filePath: string; messages: { ruleId: string | null }[] };

async function exitOf(cmd: string, args: string[], cwd: string): Promise<{ code: number; out: string }> {
  try {
    const r = await run(process.execPath, [cmd, ...args], { cwd, maxBuffer: 16 << 20 });
    return { code: 0, out: r.stdout };
  } catch (err) {
    const e = err as { code?: number; stdout?: string; stderr?: string };
    return { code: e.code ?? -1, out: `${e.stdout ?? ''}${e.stderr ?? ''}` };
  }
}

let dir = '';
let rules = new Map<string, string[]>();
let exit = -1;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'lint-probe-'));
  for (const f of ['eslint.config.js', '.prettierrc.json', 'tsconfig.json']) copyFileSync(join(REPO, f), join(dir, f));
  const tsconfig = { extends: './tsconfig.json', compilerOptions: { noEmit: true }, include: ['src/**/*.ts'] };
  writeFileSync(join(dir, 'tsconfig.test.json'), JSON.stringify(tsconfig));
  symlinkSync(join(REPO, 'node_modules'), join(dir, 'node_modules'));
  mkdirSync(join(dir, 'src'));
  for (const [name, p] of Object.entries(PROBES)) {
    writeFileSync(join(dir, `src/${name}-bad.ts`), p.bad);
    writeFileSync(join(dir, `src/${name}-good.ts`), p.good);
  }
  const r = await exitOf(ESLINT, ['-f', 'json', 'src'], dir);
  exit = r.code;
  const results = JSON.parse(r.out) as EslintResult[];
  rules = new Map(results.map((f) => [f.filePath.slice(dir.length + 1), f.messages.map((m) => String(m.ruleId))]));
}, 120_000);

describe('npm run lint', () => {
  it('exits non-zero when any file breaks a rule', () => {
    expect(exit).toBe(1);
  });

  it.each(Object.entries(PROBES))('%s: the broken file fails its rule, the mended one passes', (name, p) => {
    expect(rules.get(`src/${name}-bad.ts`)).toEqual([p.rule]);
    expect(rules.get(`src/${name}-good.ts`)).toEqual([]);
  });

  it('fails a file Prettier would format differently', async () => {
    writeFileSync(join(dir, 'src/format.ts'), `export const x = { a: 1, b: 2 };\n`);
    expect((await exitOf(PRETTIER, ['--check', 'src/format.ts'], dir)).code).toBe(0);
    writeFileSync(join(dir, 'src/format.ts'), `export const x = {a:1,b:2}\n`);
    expect((await exitOf(PRETTIER, ['--check', 'src/format.ts'], dir)).code).toBe(1);
  });
});

// The import rules (.dependency-cruiser.cjs) on a small tree written for the purpose: each import a rule
// forbids is reported under that rule's name, and the imports the rules allow are not. `npm run lint:deps`
// only shows that today's code passes; this shows that a rule can fail.
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { cruise, format, type ICruiseResult } from 'dependency-cruiser';
import extractDepcruiseOptions from 'dependency-cruiser/config-utl/extract-depcruise-options';
import extractTSConfig from 'dependency-cruiser/config-utl/extract-ts-config';
import { describe, expect, it } from 'vitest';

const REPO = resolve(import.meta.dirname, '../..');

/** Files of the tree, by path: a module's text is its imports. */
const TREE: Record<string, string> = {
  'tsconfig.json': JSON.stringify({
    compilerOptions: { module: 'NodeNext', moduleResolution: 'NodeNext', strict: true },
  }),
  'node_modules/lossless-json/package.json': JSON.stringify({
    name: 'lossless-json',
    type: 'module',
    main: 'index.js',
  }),
  'node_modules/lossless-json/index.js': 'export const parse = JSON.parse;\n',
  'node_modules/left-pad/package.json': JSON.stringify({ name: 'left-pad', type: 'module', main: 'index.js' }),
  'node_modules/left-pad/index.js': 'export default (s) => s;\n',
  'src/contract/api.ts': 'export const PAGE = 1;\n',
  'src/domain/units.ts': 'export const UNIT = 1;\n',
  'src/store/db.ts': 'export const DB = 1;\n',
  // Allowed: page/ on contract/, domain/, itself, lossless-json and node builtins; api/ on page/.
  'src/page/reader.ts':
    "import { PAGE } from '../contract/api.js';\nimport { UNIT } from '../domain/units.js';\nimport { parse } from 'lossless-json';\n" +
    "import { EOL } from 'node:os';\nexport const read = () => [PAGE, UNIT, parse, EOL];\n",
  'src/page/rows.ts': "import { read } from './reader.js';\nexport const rows = read;\n",
  'src/api/json.ts': "import { rows } from '../page/rows.js';\nexport const json = rows;\n",
  // Forbidden.
  'src/page/staging.ts': "import { DB } from '../store/db.js';\nexport const staged = DB;\n",
  'src/page/padded.ts': "import pad from 'left-pad';\nexport const padded = pad;\n",
  'src/sandbox/server.ts': "import { read } from '../page/reader.js';\nexport const serve = read;\n",
};

async function cruiseTree(): Promise<ICruiseResult> {
  const root = mkdtempSync(join(tmpdir(), 'usage-deps-'));
  for (const [path, text] of Object.entries(TREE)) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), text);
  }
  const options = await extractDepcruiseOptions(join(REPO, '.dependency-cruiser.cjs'));
  const { output } = await cruise(
    ['src'],
    { ...options, baseDir: root, outputType: 'json' },
    { extensions: ['.ts', '.js'], conditionNames: ['import', 'node', 'default'] },
    { tsConfig: extractTSConfig(join(root, 'tsconfig.json')) },
  );
  return JSON.parse(output as string) as ICruiseResult;
}

describe('the import rules', () => {
  it('report each forbidden import under its rule, and none of the allowed ones; the check then exits non-zero', async () => {
    const result = await cruiseTree();
    // Every import was followed to its module (a rule cannot fire on an import left unresolved).
    const imports = result.modules.flatMap((m) => m.dependencies);
    expect(imports.filter((d) => d.couldNotResolve).map((d) => d.module)).toEqual([]);
    expect(imports).toHaveLength(Object.values(TREE).join('').split('import ').length - 1);
    const found = result.summary.violations.map((v) => `${v.rule.name}: ${v.from} -> ${v.to}`).sort();
    expect(found).toEqual([
      'page-is-pure: src/page/padded.ts -> node_modules/left-pad/index.js',
      'page-is-pure: src/page/staging.ts -> src/store/db.ts',
      'sandbox-not-client: src/sandbox/server.ts -> src/page/reader.ts',
    ]);
    const report = await format(result, { outputType: 'err' });
    expect(report.exitCode).toBe(3);
    expect(report.output).toContain('page-is-pure');
  }, 30_000);
});

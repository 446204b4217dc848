import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';
import { demoCommand } from '../../src/cli/demo.js';
import { previousMonth } from '../../src/domain/calendar.js';
import { openStore } from '../../src/store/store.js';
import { silentLogger } from '../../src/log.js';
import { formatDemo } from '../../src/cli/format.js';
import { rawSql } from '../../src/store/rawSql.js';
import { runReport } from '../../src/report/run.js';
import { checkFocusFile, failures } from '../support/focusRules.js';

const NOW = Date.parse('2026-11-21T10:37:00Z');
const execFileAsync = promisify(execFile);
const examples = readdirSync('queries/examples')
  .filter((f) => f.endsWith('.sql'))
  .sort();

describe('the demo (npm start)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'usage-demo-'));
  const db = join(dir, 'usage.duckdb');
  let result: Awaited<ReturnType<typeof demoCommand>>;

  beforeAll(async () => {
    result = await demoCommand({ db, outDir: join(dir, 'reports'), now: () => NOW, log: silentLogger });
  });

  it("collects every granularity and writes last month's reports", () => {
    expect(result.collect.exitCode).toBe(0);
    expect(result.month).toBe(previousMonth(NOW));
    expect(result.month).toBe('2026-10');
    expect(result.report.partial).toBe(false);
    for (const f of result.report.files) expect(existsSync(f.path), f.path).toBe(true);
    const manifest = JSON.parse(readFileSync(join(dir, 'reports', '2026-10', 'manifest.json'), 'utf8'));
    expect(manifest.files.length).toBeGreaterThanOrEqual(5);
    expect(result.queryResult.length).toBe(5);
  });

  it('prints within 80 columns (a path longer than that alone on its line, whole)', () => {
    const long = formatDemo(result)
      .split('\n')
      .filter((l) => l.length > 80);
    expect(long.filter((l) => /\S\s+\S/.test(l.trim()))).toEqual([]);
    expect(formatDemo(result)).toContain('query --example compute_hours_last_month');
  });

  it('prints hints that run as printed: the query on the analyst copy, status and report', async () => {
    // A hint longer than the line is continued with a backslash, as a shell reads it pasted.
    const text = formatDemo(result).replace(/ \\\n\s+/g, ' ');
    expect(text).not.toMatch(/duckdb -readonly/); // a program nothing installs
    const hints = [result.hints.query, result.hints.status];
    for (const hint of hints) expect(text).toContain(`  ${hint}`);
    // Exactly as printed, through a shell, from the directory the demo ran in; both at once (each starts npx).
    const outs = await Promise.all(
      hints.map(async (hint) => {
        const r = await execFileAsync('sh', ['-c', hint], { encoding: 'utf8', env: { ...process.env, NO_COLOR: '1' } });
        return r.stdout;
      }),
    );
    for (const [i, hint] of hints.entries()) {
      const out = outs[i]!;
      if (hint === result.hints.query) {
        expect(out).toMatch(/^program_id\s+api_version\s+unit\s+compute_hours\n-+/);
        expect(out).toMatch(/\(\d+ rows?\)\n$/);
      } else {
        expect(out).toMatch(/coverage/);
      }
    }
  });

  it("writes a FOCUS file of the demo's month that keeps every FOCUS 1.2 rule", async () => {
    const store = await openStore({ path: db });
    try {
      const r = await runReport({
        store,
        month: result.month,
        outDir: join(dir, 'focus'),
        formats: ['focus'],
        priceBookPath: 'config/prices.toml',
        now: new Date(NOW),
      });
      const results = await checkFocusFile(
        store,
        r.files.find((f) => f.path.endsWith(`focus-${result.month}.parquet`))!.path,
      );
      console.log(
        `FOCUS 1.2 rules on the demo's month (${result.month}): ${results.length} checked, ${failures(results).length} failed`,
      );
      expect(r.focus!.rows).toBeGreaterThan(0);
      expect(failures(results)).toEqual([]);
    } finally {
      await store.close();
    }
  });

  it('has example queries that each header their name and parameters', () => {
    expect(examples.length).toBeGreaterThanOrEqual(5);
    for (const f of examples) expect(readFileSync(join('queries/examples', f), 'utf8')).toMatch(/^-- Query: \w+/);
  });

  it.each(examples)('queries/examples/%s runs as is against the analyst copy and returns rows', async (file) => {
    const store = await openStore({ path: result.analystCopy!, readOnly: true });
    try {
      // The examples are relative to now(); pin it to the demo's clock so they see its data.
      const sql = readFileSync(join('queries/examples', file), 'utf8').replaceAll(
        'now()',
        `TIMESTAMPTZ '${new Date(NOW).toISOString()}'`,
      );
      const rows = await rawSql(store).query(sql);
      expect(rows.length, file).toBeGreaterThan(0);
    } finally {
      await store.close();
    }
  });
});

// The Prometheus textfile: each run's series laid over the previous file's, counters adding up,
// written whole (temporary file, then rename) where [metrics] textfile says; nothing without it.
import { existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { commandContext } from '../../src/app/context.js';
import { mergeRun, outcomeOf, parseTextfile, renderTextfile, writeRunMetrics } from '../../src/app/metrics.js';
import { silentLogger } from '../../src/log.js';

const T0 = Date.parse('2026-11-26T10:07:00Z');

describe('metrics textfile', () => {
  it("keeps other commands' series, replaces this one's, and adds up the counters", () => {
    let s = mergeRun(new Map(), {
      command: 'schedule_hourly',
      outcome: 'complete',
      startedMs: T0,
      finishedMs: T0 + 4_500,
      requests: 40,
      throttled: 2,
    });
    s = mergeRun(s, { command: 'schedule_monthly', outcome: 'complete', startedMs: T0, finishedMs: T0 + 1_000 });
    s = mergeRun(parseTextfile(renderTextfile(s)), {
      command: 'schedule_hourly',
      outcome: 'failed',
      startedMs: T0 + 3_600_000,
      finishedMs: T0 + 3_601_000,
      requests: 5,
      throttled: 1,
    });
    const text = renderTextfile(s);
    expect(text).toContain('usage_pipeline_api_requests_total{command="schedule_hourly"} 45\n');
    expect(text).toContain('usage_pipeline_api_throttled_total{command="schedule_hourly"} 3\n');
    expect(text).toContain('usage_pipeline_last_run_outcome{command="schedule_hourly",outcome="failed"} 1\n');
    expect(text).toContain('usage_pipeline_last_run_outcome{command="schedule_hourly",outcome="complete"} 0\n');
    // The last success stays at the run that succeeded; the last run moves on.
    expect(text).toContain(
      `usage_pipeline_last_success_timestamp_seconds{command="schedule_hourly"} ${(T0 + 4_500) / 1000}\n`,
    );
    expect(text).toContain(
      `usage_pipeline_last_run_timestamp_seconds{command="schedule_hourly"} ${(T0 + 3_601_000) / 1000}\n`,
    );
    expect(text).toContain('usage_pipeline_last_run_duration_seconds{command="schedule_hourly"} 1\n');
    expect(text).toContain('usage_pipeline_last_run_outcome{command="schedule_monthly",outcome="complete"} 1\n');
    expect(text).toMatch(/^# TYPE usage_pipeline_api_requests_total counter$/m);
    // Each family's HELP and TYPE once, before its series.
    expect(text.match(/^# TYPE usage_pipeline_last_run_outcome gauge$/gm)?.length).toBe(1);
  });

  it("reads a command's outcome from its result", () => {
    expect(outcomeOf({ status: 'partial', exitCode: 2 })).toBe('partial');
    expect(outcomeOf({ exitCode: 2 })).toBe('partial');
    expect(outcomeOf({ exitCode: 0 })).toBe('complete');
    expect(outcomeOf({ dir: '/x' })).toBe('complete');
  });

  it("writes the configured file whole, with the database's size, and nothing when none is configured", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'usage-metrics-'));
    const db = join(dir, 'usage.duckdb');
    writeFileSync(db, Buffer.alloc(1234));
    const textfile = join(dir, 'metrics', 'usage-pipeline.prom');
    const none = commandContext({
      db,
      cwd: dir,
      env: {},
      log: silentLogger,
      config: writeConfig(dir, 'none.toml', ''),
    });
    await writeRunMetrics(none, { command: 'collect', outcome: 'complete', startedMs: T0, finishedMs: T0 + 1 });
    expect(readdirSync(dir).sort()).toEqual(['none.toml', 'usage.duckdb']);
    const ctx = commandContext({
      db,
      cwd: dir,
      env: {},
      log: silentLogger,
      config: writeConfig(dir, 'usage.toml', '[metrics]\ntextfile = "metrics/usage-pipeline.prom"\n'),
    });
    // A folder that does not exist: the run is not failed for it (a warning), and nothing half-written is left.
    await writeRunMetrics(ctx, { command: 'collect', outcome: 'complete', startedMs: T0, finishedMs: T0 + 1 });
    expect(existsSync(textfile)).toBe(false);
    const { mkdirSync } = await import('node:fs');
    mkdirSync(join(dir, 'metrics'));
    await writeRunMetrics(ctx, { command: 'report', outcome: 'partial', startedMs: T0, finishedMs: T0 + 2_000 });
    const text = readFileSync(textfile, 'utf8');
    expect(text).toContain('usage_pipeline_database_size_bytes 1234\n');
    expect(text).toMatch(/^usage_pipeline_build_info\{version="\d+\.\d+\.\d+"\} 1$/m);
    expect(text).toContain('usage_pipeline_last_run_outcome{command="report",outcome="partial"} 1\n');
    expect(readdirSync(join(dir, 'metrics'))).toEqual(['usage-pipeline.prom']);
  });
});

function writeConfig(dir: string, name: string, text: string): string {
  writeFileSync(join(dir, name), text);
  return join(dir, name);
}

// The files an operator installs (deploy/): the systemd units checked by systemd-analyze, the alert
// rules by promtool (rules and their unit tests), the cron lines for the service user.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { mergeRun, renderTextfile } from '../../src/app/metrics.js';

const DEPLOY = resolve(import.meta.dirname, '../../deploy');
const SYSTEMD = join(DEPLOY, 'systemd');
const units = readdirSync(SYSTEMD).filter((f) => /\.(service|timer)$/.test(f));

const verify = (files: string[]) =>
  spawnSync('systemd-analyze', ['verify', '--man=no', ...files], { encoding: 'utf8' });

describe('deploy/systemd', () => {
  it('ships the daemon and a oneshot service with a persistent timer per job', () => {
    expect(units.sort()).toEqual([
      'usage-pipeline-daily.service',
      'usage-pipeline-daily.timer',
      'usage-pipeline-hourly.service',
      'usage-pipeline-hourly.timer',
      'usage-pipeline-monthly.service',
      'usage-pipeline-monthly.timer',
      'usage-pipeline.service',
    ]);
    for (const f of units.filter((u) => u.endsWith('.timer')))
      expect(readFileSync(join(SYSTEMD, f), 'utf8')).toMatch(/^Persistent=true$/m);
  });

  it('passes systemd-analyze verify without a word', () => {
    const r = verify(units.map((u) => join(SYSTEMD, u)));
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout + r.stderr).toBe('');
  });

  it('(systemd-analyze does speak up about a broken unit)', () => {
    const dir = mkdtempSync(join(tmpdir(), 'usage-units-'));
    const broken = readFileSync(join(SYSTEMD, 'usage-pipeline.service'), 'utf8').replace(
      'ProtectSystem=strict',
      'ProtectSystem=strictly',
    );
    writeFileSync(join(dir, 'usage-pipeline.service'), broken);
    expect(verify([join(dir, 'usage-pipeline.service')]).stderr).toMatch(/ProtectSystem|protect system/i);
  });

  it('runs every service as the service user, hardened, through /usr/bin/env', () => {
    for (const f of units.filter((u) => u.endsWith('.service'))) {
      const text = readFileSync(join(SYSTEMD, f), 'utf8');
      for (const line of [
        'User=usage',
        'NoNewPrivileges=yes',
        'PrivateTmp=yes',
        'ProtectSystem=strict',
        'ReadWritePaths=/var/lib/usage-pipeline /var/log/usage-pipeline',
        'Environment=USAGE_API_KEY_FILE=/etc/usage-pipeline/key',
      ]) {
        expect(text, `${f}: ${line}`).toMatch(new RegExp(`^${line.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}$`, 'm'));
      }
      expect(text).toMatch(/^ExecStart=\/usr\/bin\/env usage-pipeline /m);
    }
  });
});

describe('deploy/prometheus', () => {
  it('has rules promtool accepts', () => {
    const r = spawnSync('promtool', ['check', 'rules', join(DEPLOY, 'prometheus', 'usage-pipeline.rules.yml')], {
      encoding: 'utf8',
    });
    expect(r.status, r.stdout + r.stderr).toBe(0);
  });

  it('passes its own promtool rule tests (stale data after two missed runs, failed runs, 429s)', () => {
    const r = spawnSync('promtool', ['test', 'rules', 'usage-pipeline.rules.test.yml'], {
      cwd: join(DEPLOY, 'prometheus'),
      encoding: 'utf8',
    });
    expect(r.status, r.stdout + r.stderr).toBe(0);
    for (const alert of ['HourlyDataStale', 'DailyDataStale', 'RunFailed', 'RateLimited', 'NotRunning']) {
      expect(readFileSync(join(DEPLOY, 'prometheus', 'usage-pipeline.rules.test.yml'), 'utf8')).toContain(
        `alertname: UsagePipeline${alert}`,
      );
    }
  });
});

describe('the metrics textfile', () => {
  it('passes promtool check metrics with every family written', () => {
    let s = mergeRun(new Map(), {
      command: 'collect',
      outcome: 'complete',
      startedMs: 1_764_151_620_000,
      finishedMs: 1_764_151_650_000,
      requests: 43,
      throttled: 1,
    });
    s = mergeRun(s, {
      command: 'schedule_monthly',
      outcome: 'failed',
      startedMs: 1_764_151_620_000,
      finishedMs: 1_764_151_621_500,
    });
    s.set('usage_pipeline_data_as_of_timestamp_seconds{source="v2_programs",granularity="daily"}', 1_764_115_200);
    s.set('usage_pipeline_database_size_bytes', 12_345_678);
    s.set('usage_pipeline_analyst_copy_timestamp_seconds', 1_764_151_649.5);
    s.set('usage_pipeline_build_info{version="0.1.0"}', 1);
    const text = renderTextfile(s);
    const r = spawnSync('promtool', ['check', 'metrics'], { input: text, encoding: 'utf8' });
    expect(r.status, r.stdout + r.stderr).toBe(0);
    expect(r.stdout + r.stderr).toBe('');
    // promtool does object to what breaks the conventions.
    const bad = spawnSync('promtool', ['check', 'metrics'], {
      input: '# HELP usage_pipeline_requests x\n# TYPE usage_pipeline_requests counter\nusage_pipeline_requests 1\n',
      encoding: 'utf8',
    });
    expect(bad.stdout + bad.stderr).toMatch(/_total/);
  });
});

describe('deploy/cron', () => {
  it('runs every line as the service user, logging under the folder it owns, with the config and key set', () => {
    const text = readFileSync(join(DEPLOY, 'cron', 'usage-pipeline'), 'utf8');
    expect(text).toMatch(/^USAGE_CONFIG=\/etc\/usage-pipeline\/usage\.toml$/m);
    expect(text).toMatch(/^USAGE_API_KEY_FILE=\/etc\/usage-pipeline\/key$/m);
    expect(text).toMatch(/^PATH=.*\/usr\/local\/bin.*:\/usr\/bin/m);
    const jobs = text.split('\n').filter((l) => /^[\d*]/.test(l));
    expect(jobs.length).toBe(3);
    for (const l of jobs) {
      expect(l).toMatch(/^(\S+\s+){5}usage usage-pipeline .* >> \/var\/log\/usage-pipeline\/\S+\.log 2>&1$/);
      expect(l).not.toContain('%'); // cron would cut the line there
    }
  });
});

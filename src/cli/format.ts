// Human-readable output of the commands; --json prints their results as they are instead.
import type { CollectResult } from '../collect/collect.js';
import type { StatusResult } from './status.js';
import type { ReportResult } from '../report/run.js';
import type { DemoResult } from './demo.js';

const n = (v: number | bigint) => Number(v).toLocaleString('en-US');

export function formatCollectSummary(r: CollectResult & { dbPath: string; analystCopy: string | null }): string {
  const lines = [
    `collect ${r.status}: ${n(r.rows)} values in ${n(r.pages)} pages, ${n(r.requests)} requests (${n(r.retries)} retried, ${n(r.throttled)} throttled) in ${(r.durationMs / 1000).toFixed(1)} s; run ${r.runId}`,
  ];
  // An organization's plan decides which API version serves it; the other answers 403 (not eligible),
  // which is expected and said once per organization rather than per request.
  const byOrg = new Map<string, Set<string>>();
  for (const s of r.scopes) {
    if (s.status === 'not_eligible') byOrg.set(s.scope, (byOrg.get(s.scope) ?? new Set()).add(s.source));
    else if (s.status === 'failed' || s.status === 'partial') {
      lines.push(`  ${s.status}: ${s.source} ${s.granularity ?? ''} ${s.scope}${s.detail ? ` - ${s.detail}` : ''}`);
    }
  }
  for (const [org, sources] of byOrg) lines.push(`  ${org}: not eligible for ${[...sources].sort().join(', ')} (its plan is served by the other API version)`);
  if (r.error) lines.push(`  error: ${r.error}`);
  lines.push(`  database: ${r.dbPath}`);
  if (r.analystCopy) lines.push(`  analysts open: ${r.analystCopy}`);
  return lines.join('\n');
}

function iso(v: unknown): string {
  if (v === null || v === undefined) return '-';
  const d = v instanceof Date ? v : new Date(String(v));
  return Number.isNaN(d.getTime()) ? String(v) : d.toISOString().replace('.000Z', 'Z');
}

export function formatStatus(s: StatusResult): string {
  const out: string[] = [];
  out.push(`database ${s.db} (schema v${s.schemaVersion})${s.readFrom !== s.db ? `\n  read from ${s.readFrom}: ${s.note}` : ''}`);
  out.push(
    `rows: usage_program ${n(s.rows.usage_program)}, usage_framework ${n(s.rows.usage_framework)}; programs ${n(s.rows.programs)}, frameworks ${n(s.rows.frameworks)}, snapshots ${n(s.rows.snapshots)}`,
  );
  out.push('', 'coverage (complete windows):');
  out.push(`  ${'source'.padEnd(14)} ${'granularity'.padEnd(11)} ${'scope'.padEnd(16)} ${'from'.padEnd(20)} ${'to'.padEnd(20)} ${'collected'.padEnd(20)} last status`);
  for (const c of s.coverage) {
    out.push(
      `  ${c.source.padEnd(14)} ${c.granularity.padEnd(11)} ${c.scope.padEnd(16)} ${iso(c.firstCompleteStart).padEnd(20)} ${iso(c.lastCompleteEnd).padEnd(20)} ${iso(c.lastCollectedAt).padEnd(20)} ${c.lastStatus}${c.lastDetail && c.lastStatus !== 'complete' ? ` (${c.lastDetail.slice(0, 80)})` : ''}`,
    );
  }
  out.push('', 'last runs:');
  for (const r of s.runs) {
    out.push(
      `  ${r.runId} ${r.command} ${r.status.padEnd(8)} started ${iso(r.startedAt)} requests ${n(r.requests)} retries ${n(r.retries)} throttled ${n(r.throttled)} pages ${n(r.pages)} rows ${n(r.rowsLoaded)}${r.error ? ` error: ${r.error}` : ''}`,
    );
  }
  return out.join('\n');
}

export function formatReportSummary(r: ReportResult): string {
  const lines = [
    `report ${r.period.label}${r.partial ? ' PARTIAL (not every scope is completely collected for the period)' : ''}: total ${r.currency} ${r.total} (${r.granularity} data, price book ${r.priceBookRevision})`,
  ];
  if (r.unpricedLines > 0) lines.push(`  ${r.unpricedLines} unpriced line(s): their plan or metric has no rate in the price book`);
  lines.push(`  written to ${r.dir}`);
  for (const f of r.files) lines.push(`    ${f.path.split('/').pop()}  ${n(f.rows)} rows`);
  return lines.join('\n');
}

export function formatDemo(r: DemoResult): string {
  const out = [formatCollectSummary(r.collect as DemoResult['collect'] & { dbPath: string; analystCopy: string | null }), formatReportSummary(r.report)];
  out.push('', 'Try it:', `  duckdb -readonly ${r.analystCopy ?? r.dbPath}`, ...r.query.split('\n').map((l) => `    ${l}`));
  out.push('', 'which answers:');
  for (const row of r.queryResult) out.push('  ' + Object.values(row).map((v) => String(v)).join('  '));
  out.push('', `Next: usage-pipeline status, usage-pipeline report --month ${r.month}, and the README for finance, operators and analysts.`);
  return out.join('\n');
}

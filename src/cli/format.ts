// Human-readable output of the commands; --json prints their results as they are instead.
import type { CollectResult } from '../collect/collect.js';
import type { StatusResult } from './status.js';

const n = (v: number | bigint) => Number(v).toLocaleString('en-US');

export function formatCollectSummary(r: CollectResult & { dbPath: string; analystCopy: string | null }): string {
  const lines = [
    `collect ${r.status}: ${n(r.rows)} values in ${n(r.pages)} pages, ${n(r.requests)} requests (${n(r.retries)} retried, ${n(r.throttled)} throttled) in ${(r.durationMs / 1000).toFixed(1)} s; run ${r.runId}`,
  ];
  for (const s of r.scopes) {
    if (s.status === 'complete' || s.status === 'up_to_date') continue;
    lines.push(`  ${s.status}: ${s.source} ${s.granularity ?? ''} ${s.scope}${s.detail ? ` - ${s.detail}` : ''}`);
  }
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
  for (const c of s.coverage as unknown as Record<string, unknown>[]) {
    out.push(
      `  ${String(c.source).padEnd(14)} ${String(c.granularity).padEnd(11)} ${String(c.scope).padEnd(16)} ${iso(c.complete_from ?? c.window_start).padEnd(20)} ${iso(c.complete_to ?? c.window_end).padEnd(20)} ${iso(c.last_collected_at ?? c.collected_at).padEnd(20)} ${String(c.last_status ?? c.status ?? '')}`,
    );
  }
  out.push('', 'last runs:');
  for (const r of s.runs as unknown as Record<string, unknown>[]) {
    out.push(
      `  ${String(r.run_id)} ${String(r.status).padEnd(8)} started ${iso(r.started_at)} requests ${n(Number(r.requests ?? 0))} retries ${n(Number(r.retries ?? 0))} throttled ${n(Number(r.throttled ?? 0))} rows ${n(Number(r.rows_loaded ?? 0))}${r.error ? ` error: ${String(r.error)}` : ''}`,
    );
  }
  return out.join('\n');
}

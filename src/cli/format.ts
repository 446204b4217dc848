// Human-readable output of the commands; --json prints their results as they are instead.
import type { CollectResult } from '../collect/collect.js';
import type { StatusResult } from './status.js';
import type { ReportResult } from '../report/run.js';
import { focusLeftOutLine } from '../report/focus.js';
import type { DemoResult } from './demo.js';

const n = (v: number | bigint) => Number(v).toLocaleString('en-US');

/** The width human output fits: a terminal's own, else 80 columns (a pipe, a log, cron's mail). */
export function outputWidth(stream: { isTTY?: boolean; columns?: number } = process.stdout): number {
  return stream.isTTY && stream.columns ? Math.max(40, stream.columns) : 80;
}

/**
 * Lines longer than `width` broken at spaces, continued under their indent plus two. A single word
 * longer than the width (a path) keeps a line of its own, whole, so it can still be copied.
 */
export function wrap(text: string, width = 80): string {
  const out: string[] = [];
  for (const line of text.split('\n')) {
    if (line.length <= width) {
      out.push(line);
      continue;
    }
    const indent = /^ */.exec(line)![0];
    const next = `${indent}  `;
    let cur = indent;
    for (const word of line.slice(indent.length).split(' ')) {
      const candidate = cur.trim() === '' ? cur + word : `${cur} ${word}`;
      if (candidate.length <= width || cur.trim() === '') cur = candidate;
      else {
        out.push(cur);
        cur = next + word;
      }
    }
    out.push(cur);
  }
  return out.join('\n');
}

/** One line for cron and logs; on a terminal (verbose) also where things are and which orgs use which API. */
export function formatCollectSummary(
  r: CollectResult & { dbPath: string; analystCopy: string | null },
  verbose = true,
  width = 80,
): string {
  return wrap(collectSummaryLines(r, verbose).join('\n'), width);
}

function collectSummaryLines(
  r: CollectResult & { dbPath: string; analystCopy: string | null },
  verbose: boolean,
): string[] {
  const lines = [
    `collect ${r.status}: ${n(r.rows)} values in ${n(r.pages)} pages, ${n(r.requests)} requests (${n(r.retries)} retried, ${n(r.throttled)} throttled) in ${(r.durationMs / 1000).toFixed(1)} s; run ${r.runId}`,
  ];
  if (!verbose) {
    // Failures still get a line each: they are what the operator must act on.
    for (const s of r.scopes)
      if (s.status === 'failed')
        lines.push(`  failed: ${s.source} ${s.granularity ?? ''} ${s.scope} - ${s.detail ?? ''}`);
    if (r.error) lines.push(`  error: ${r.error}`);
    return lines;
  }
  // An organization's plan decides which API version serves it; the other answers 403 (not eligible),
  // which is expected and said once per organization rather than per request.
  const byOrg = new Map<string, Set<string>>();
  for (const s of r.scopes) {
    if (s.status === 'not_eligible') byOrg.set(s.scope, (byOrg.get(s.scope) ?? new Set()).add(s.source));
    else if (s.status === 'failed' || s.status === 'partial') {
      lines.push(`  ${s.status}: ${s.source} ${s.granularity ?? ''} ${s.scope}${s.detail ? ` - ${s.detail}` : ''}`);
    }
  }
  const served = new Set(
    r.scopes.filter((s) => s.status !== 'not_eligible' && s.source !== 'inventory').map((s) => s.scope),
  );
  for (const [org, sources] of byOrg) {
    const why = served.has(org) ? 'its plan is served by the other API version' : 'no billable usage: complete';
    lines.push(`  ${org}: not eligible for ${[...sources].sort().join(', ')} (${why})`);
  }
  if (r.error) lines.push(`  error: ${r.error}`);
  lines.push(`  database: ${r.dbPath}`);
  if (r.analystCopy) lines.push(`  analysts open: ${r.analystCopy}`);
  return lines;
}

/** A run id's distinguishing part for an 80-column table: ids start with the date and time (shown in
 *  `started` already), so the table shows their random suffix, the last 8 characters. */
export function shortRunId(runId: string): string {
  return runId.length > 8 ? runId.slice(-8) : runId;
}

function iso(v: unknown): string {
  if (v === null || v === undefined) return '-';
  const d = v instanceof Date ? v : new Date(String(v));
  return Number.isNaN(d.getTime()) ? String(v) : d.toISOString().replace(/\.\d{3}Z$/, 'Z');
}

function age(v: Date | null, now: number): string {
  if (!v) return '-';
  const m = Math.round((now - v.getTime()) / 60_000);
  if (m < 60) return `${m}m ago`;
  if (m < 48 * 60) return `${Math.round(m / 60)}h ago`;
  return `${Math.round(m / 1440)}d ago`;
}

function table(rows: string[][]): string[] {
  const widths = rows[0]!.map((_, c) => Math.max(...rows.map((r) => (r[c] ?? '').length)));
  return rows.map(
    (r) =>
      '  ' +
      r
        .map((cell, c) => cell.padEnd(widths[c]!))
        .join('  ')
        .trimEnd(),
  );
}

/** `status` fits the terminal (80 columns off one): long details are cut, the full text is in `status --json`. */
export const STATUS_WIDTH = 80;

export function formatStatus(s: StatusResult, now: number = Date.now(), width: number = STATUS_WIDTH): string {
  const out: string[] = [];
  if (s.running && !s.readFrom) return `database ${s.db}: ${s.note}`;
  out.push(`database ${s.db} (schema v${s.schemaVersion})`);
  if (s.running) {
    const r = s.running;
    out.push(
      `  collection running: pid ${r.pid} since ${r.since}${r.phase ? `, phase ${r.phase}, ${r.requestsDone} of ${r.requestsPlanned} requests, ${r.valuesLoaded} values` : ''}`,
    );
  }
  if (s.readFrom !== s.db) out.push(`  read from ${s.readFrom}: ${s.note}`);
  if (s.storage && !s.storage.current)
    out.push(`  storage format ${s.storage.format}: \`usage-pipeline compact\` rewrites it in the current one`);
  out.push(`usage rows: ${n(s.rows.usage_program)} program, ${n(s.rows.usage_framework)} framework`);
  out.push(
    `inventory: ${n(s.rows.programs)} programs, ${n(s.rows.frameworks)} frameworks, ${n(s.rows.snapshots)} snapshots`,
  );
  out.push('', 'coverage (complete data per source, granularity and organization):');
  const rows = [['source', 'gran.', 'scope', 'complete to', 'collected', 'last status']];
  for (const c of s.coverage) {
    rows.push([
      c.source,
      c.granularity,
      c.scope,
      minute(c.lastCompleteEnd),
      age(c.lastCollectedAt, now),
      c.lastStatus + (c.lastDetail && c.lastStatus !== 'complete' ? `: ${c.lastDetail}` : ''),
    ]);
  }
  out.push(...table(rows));
  out.push('', 'last runs:');
  const runs = [['run', 'command', 'status', 'started', 'requests', '429s', 'rows']];
  for (const r of s.runs) {
    runs.push([
      shortRunId(r.runId),
      r.command,
      r.status,
      minute(r.startedAt),
      n(r.requests),
      n(r.throttled),
      n(r.rowsLoaded),
    ]);
  }
  out.push(...table(runs));
  const errors = s.runs.filter((r) => r.error);
  for (const r of errors) out.push(`  ${shortRunId(r.runId)} error: ${r.error!.replace(/\s+/g, ' ')}`);
  out.push('', `check: ${s.check.reason}`);
  let cut = false;
  const fitted = out.map((line) => {
    if (line.length <= width) return line;
    cut = true;
    return line.slice(0, width - 1) + '…';
  });
  if (cut) fitted.push(wrap('(long details are cut to fit: `usage-pipeline status --json` has them in full)', width));
  return fitted.join('\n');
}

/** UTC, to the minute: "2026-10-01 13:07". */
function minute(v: unknown): string {
  const t = iso(v);
  return t === '-' ? t : t.slice(0, 16).replace('T', ' ');
}

export function formatReportSummary(r: ReportResult, width = 80): string {
  const lines = [
    `report ${r.period.label}${r.partial ? ' PARTIAL (not every scope is completely collected for the period)' : ''}: total ${r.currency} ${r.total} (${r.granularity} data, price book ${r.priceBookRevision})`,
  ];
  if (r.unpricedLines > 0)
    lines.push(
      `  UNPRICED: ${n(r.unpricedLines)} line(s) have no rate in the price book (plan or metric without a rate): their cost is blank, not 0, and in no total`,
    );
  if (r.assumed.used.length > 0) {
    lines.push(
      `  ASSUMED RATES: ${r.currency} ${r.assumed.amount} of the total (${r.assumed.share}%) rests on ${r.assumed.used.length} of the ${r.assumed.marked} rate(s) the price book marks assumed`,
    );
  }
  for (const s of r.summarised)
    lines.push(
      `  workbook: ${s.name} has ${n(s.rows)} lines, summarised on ${s.sheets.length} sheets; every line is in ${s.name}.parquet`,
    );
  if (r.forecast?.current && r.forecast.totals.projection !== null) {
    lines.push(
      `  month to date ${r.currency} ${r.forecast.totals.monthToDate}; projected month end ${r.currency} ${r.forecast.totals.projection} (a projection from the last ${r.forecast.windowDays} complete days; the method is on the workbook's Forecast sheet)`,
    );
  }
  if (r.focus) {
    lines.push(
      `  FOCUS 1.2: ${n(r.focus.rows)} rows${r.focus.corrections ? `, ${n(r.focus.corrections)} Correction rows against the finalised month` : ''}; costs are an ${r.focus.costBasis}`,
    );
    if (r.focus.leftOut.lines > 0) lines.push(`  FOCUS left out ${focusLeftOutLine(r.focus)}`);
    if (r.focus.finalized)
      lines.push(
        `  finalised as ${r.focus.finalized.finalizationId}: later changes to this month are exported as corrections`,
      );
  }
  lines.push(`  written to ${r.dir}`);
  for (const f of r.files) lines.push(`    ${f.path.split('/').pop()}  ${n(f.rows)} rows`);
  return wrap(lines.join('\n'), width);
}

/** A shell command broken at spaces with a trailing backslash, so that it still runs as pasted. */
export function shellWrap(command: string, indent: string, width = 80): string {
  const parts = wrap(`${indent}${command}`, width - 2).split('\n');
  return parts.map((l, i) => (i < parts.length - 1 ? `${l} \\` : l)).join('\n');
}

export function formatDemo(r: DemoResult, width = 80): string {
  const out = [formatCollectSummary(r.collect, true, width), formatReportSummary(r.report, width)];
  out.push(
    '',
    'Try it: a query on the analyst copy',
    `  ${r.analystCopy ?? r.dbPath}:`,
    shellWrap(r.hints.query, '  ', width),
    ...r.query.split('\n').map((l) => `    ${l}`),
  );
  out.push('', 'which answers:');
  for (const row of r.queryResult)
    out.push(
      '  ' +
        Object.values(row)
          .map((v) => String(v))
          .join('  '),
    );
  out.push(
    '',
    'Next:',
    shellWrap(r.hints.status, '  ', width),
    shellWrap(r.hints.report, '  ', width),
    '  and the README for finance, operators and analysts.',
  );
  return wrap(out.join('\n'), width);
}

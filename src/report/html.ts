// The charts report: one self-contained HTML file (inline SVG and CSS, a few lines of inline script,
// no network) that finance can read at a glance and print. Charts are drawn here as SVG, so the page
// needs no library and shows the same picture with scripts off; the inline script only publishes a
// summary of what was drawn (window.__charts) for automated checks.
import type { Forecast } from './forecast.js';
import type { AssumedSummary } from './workbook.js';

export interface HtmlReportInput {
  title: string;
  periodLabel: string;
  rangeStart: Date;
  rangeEnd: Date;
  generatedAt: Date;
  partial: boolean;
  currency: string;
  /** The workbook's total (decimal string). */
  total: string;
  granularity: string;
  priceBookRevision: string;
  unpricedLines: number;
  /** The rates the price book marks assumed and what of the total rests on them. */
  assumed: AssumedSummary;
  /** Spend per day of each top program, and of the other programs (program_id null), or of every program. */
  dailySpend: { program_id: string | null; program_name: string | null; day: Date; cost: string }[];
  /** The number of programs with spend rows (default: the programs dailySpend names). */
  programCount?: number;
  topPrograms: { program_id: string; name: string; cost: string }[];
  topFrameworks: { framework_id: string; name: string; program_name: string; cost: string }[];
  storage: { day: Date; metric: string; gb_month: string }[];
  /** Per day; counts are null on days before snapshots_known_from (the inventory had not seen snapshots yet). */
  snapshots: {
    day: Date;
    snapshots: bigint | number | null;
    manual: bigint | number | null;
    scheduled: bigint | number | null;
    known_from: Date | null;
  }[];
  transfer: { day: Date; metric: string; gb: string; cost: string }[];
  /** Shown when the period is in progress (forecast.current). */
  forecast: Forecast | null;
  /** The Alerts section (report/alertsHtml.ts), for a month. */
  alertsHtml?: string;
}

/**
 * Programs drawn on their own in the program charts (the top-programs bars and the stacked daily
 * chart, the same programs in both); the rest are one "Other programs" bar and series, so both charts
 * add up to the total however many programs there are.
 */
export const TOP_PROGRAMS = 8;
const OTHER_COLOR = '#999999';
const W = 920;
const H = 280;
const M = { top: 16, right: 16, bottom: 46, left: 72 };
// Colour-blind-safe palette (Okabe-Ito, then greys).
const PALETTE = ['#0072B2', '#E69F00', '#009E73', '#CC79A7', '#56B4E9', '#D55E00', '#F0E442', '#000000', '#999999'];

export function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
}

/** A decimal string as money for display, without going through floating point. */
export function formatMoney(amount: string, currency: string): string {
  const neg = amount.startsWith('-');
  const [i, f = ''] = (neg ? amount.slice(1) : amount).split('.');
  const grouped = i!.replace(/\B(?=(\d{3})+(?!\d))/g, ',');
  const body = `${grouped}.${f.padEnd(2, '0').slice(0, 2)}`;
  const s = currency === 'USD' ? `$${body}` : `${body} ${currency}`;
  return neg ? `-${s}` : s;
}

const fmtNum = (v: number, digits = 2) =>
  v.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: 0 });
const dayLabel = (d: Date) => d.toISOString().slice(5, 10);
const dayKey = (d: Date) => d.toISOString().slice(0, 10);

function niceMax(v: number): number {
  if (!(v > 0)) return 1;
  const p = 10 ** Math.floor(Math.log10(v));
  for (const m of [1, 2, 2.5, 5, 10]) if (m * p >= v) return m * p;
  return 10 * p;
}

function daysOf(start: Date, end: Date): Date[] {
  const out: Date[] = [];
  for (let t = start.getTime(); t < end.getTime(); t += 86_400_000) out.push(new Date(t));
  return out;
}

/** An axis maximum whose four steps are whole numbers (for counts): 4, 8, 12, ... */
function integerMax(v: number): number {
  return 4 * Math.max(1, Math.ceil(niceMax(v) / 4));
}

function yAxis(max: number, fmt: (v: number) => string): string {
  const ih = H - M.top - M.bottom;
  let s = '';
  for (let i = 0; i <= 4; i++) {
    const v = (max * i) / 4;
    const y = M.top + ih - (ih * i) / 4;
    s += `<line class="grid" x1="${M.left}" x2="${W - M.right}" y1="${y.toFixed(1)}" y2="${y.toFixed(1)}"/>`;
    s += `<text class="tick" x="${M.left - 6}" y="${(y + 4).toFixed(1)}" text-anchor="end">${escapeHtml(fmt(v))}</text>`;
  }
  return s;
}

function xLabels(days: Date[], x: (i: number) => number): string {
  const every = days.length > 16 ? Math.ceil(days.length / 16) : 1;
  return days
    .map((d, i) =>
      i % every === 0
        ? `<text class="tick" x="${x(i).toFixed(1)}" y="${H - M.bottom + 16}" text-anchor="middle">${dayLabel(d)}</text>`
        : '',
    )
    .join('');
}

function legend(names: string[], colors: (string | undefined)[] = []): string {
  return `<ul class="legend">${names
    .map(
      (n, i) =>
        `<li><span class="swatch" style="background:${colors[i] ?? PALETTE[i % PALETTE.length]}"></span>${escapeHtml(n)}</li>`,
    )
    .join('')}</ul>`;
}

function figure(id: string, title: string, caption: string, body: string, points: number, extra = ''): string {
  const content = points > 0 ? body : '<p class="empty">No data for this period.</p>';
  return `<figure class="chart" id="chart-${id}" data-chart="${id}" data-points="${points}">
<figcaption><h2>${escapeHtml(title)}</h2><p>${escapeHtml(caption)}</p></figcaption>
${content}${points > 0 ? extra : ''}
</figure>`;
}

/** Stacked columns: one column per day, one band per series. */
function stackedColumns(
  days: Date[],
  series: { name: string; values: number[]; color?: string }[],
  fmt: (v: number) => string,
  unit: string,
): string {
  const totals = days.map((_, i) => series.reduce((a, s) => a + Math.max(0, s.values[i] ?? 0), 0));
  const max = niceMax(Math.max(0, ...totals));
  const iw = W - M.left - M.right;
  const ih = H - M.top - M.bottom;
  const bw = iw / Math.max(1, days.length);
  const x = (i: number) => M.left + bw * i + bw / 2;
  let marks = '';
  days.forEach((d, i) => {
    let acc = 0;
    series.forEach((s, si) => {
      const v = Math.max(0, s.values[i] ?? 0);
      if (v === 0) return;
      const y0 = M.top + ih - (ih * acc) / max;
      const h = (ih * v) / max;
      acc += v;
      marks += `<rect class="mark" x="${(M.left + bw * i + bw * 0.12).toFixed(1)}" y="${(y0 - h).toFixed(1)}" width="${(bw * 0.76).toFixed(1)}" height="${Math.max(0.5, h).toFixed(1)}" fill="${s.color ?? PALETTE[si % PALETTE.length]}"><title>${escapeHtml(`${dayKey(d)} ${s.name}: ${fmt(v)}${unit}`)}</title></rect>`;
    });
  });
  return `<svg viewBox="0 0 ${W} ${H}" role="img" preserveAspectRatio="xMidYMid meet">${yAxis(max, fmt)}${marks}${xLabels(days, x)}</svg>`;
}

/** Horizontal bars, largest first (an item may carry its own colour: the "other" bar is grey). */
function bars(items: { label: string; value: number; text: string; color?: string }[]): string {
  const rowH = 24;
  const left = 300;
  const h = items.length * rowH + 10;
  const max = niceMax(Math.max(0, ...items.map((i) => i.value)));
  const iw = W - left - 120;
  const marks = items
    .map((it, i) => {
      const y = 5 + i * rowH;
      const w = Math.max(0.5, (iw * Math.max(0, it.value)) / max);
      const label = it.label.length > 44 ? `${it.label.slice(0, 43)}…` : it.label;
      return (
        `<text class="label" x="${left - 8}" y="${y + 16}" text-anchor="end">${escapeHtml(label)}</text>` +
        `<rect class="mark" x="${left}" y="${y + 3}" width="${w.toFixed(1)}" height="${rowH - 7}" fill="${it.color ?? PALETTE[0]}"><title>${escapeHtml(`${it.label}: ${it.text}`)}</title></rect>` +
        `<text class="value" x="${(left + w + 6).toFixed(1)}" y="${y + 16}">${escapeHtml(it.text)}</text>`
      );
    })
    .join('');
  return `<svg viewBox="0 0 ${W} ${h}" role="img" preserveAspectRatio="xMidYMid meet">${marks}</svg>`;
}

/** Lines over days, one per series; a dashed series is drawn dashed (projections); counts get whole-number ticks. */
function lines(
  days: Date[],
  series: { name: string; values: (number | null)[]; dashed?: boolean; color?: string }[],
  fmt: (v: number) => string,
  unit: string,
  o: { integer?: boolean } = {},
): string {
  const all = series.flatMap((s) => s.values.filter((v): v is number => v !== null));
  const top = all.reduce((a, v) => Math.max(a, v), 0);
  const max = o.integer ? integerMax(top) : niceMax(top);
  const iw = W - M.left - M.right;
  const ih = H - M.top - M.bottom;
  const step = days.length > 1 ? iw / (days.length - 1) : 0;
  const x = (i: number) => M.left + (days.length > 1 ? step * i : iw / 2);
  const y = (v: number) => M.top + ih - (ih * v) / max;
  let marks = '';
  series.forEach((s, si) => {
    const color = s.color ?? PALETTE[si % PALETTE.length]!;
    const pts = s.values
      .map((v, i) => (v === null ? null : `${x(i).toFixed(1)},${y(v).toFixed(1)}`))
      .filter((p): p is string => p !== null);
    if (pts.length === 0) return;
    marks += `<polyline fill="none" stroke="${color}" stroke-width="2"${s.dashed ? ' stroke-dasharray="6 4"' : ''} points="${pts.join(' ')}"/>`;
    s.values.forEach((v, i) => {
      if (v === null) return;
      marks += `<circle class="mark" cx="${x(i).toFixed(1)}" cy="${y(v).toFixed(1)}" r="2.5" fill="${color}"><title>${escapeHtml(`${dayKey(days[i]!)} ${s.name}: ${fmt(v)}${unit}`)}</title></circle>`;
    });
  });
  return `<svg viewBox="0 0 ${W} ${H}" role="img" preserveAspectRatio="xMidYMid meet">${yAxis(max, fmt)}${marks}${xLabels(days, x)}</svg>`;
}

const STYLE = `
:root { color-scheme: light; --ink:#1d2733; --muted:#5b6773; --rule:#d9dee4; }
* { box-sizing: border-box; }
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif; color: var(--ink); margin: 24px auto; max-width: 980px; padding: 0 16px; }
header h1 { font-size: 22px; margin: 0 0 4px; }
.meta { color: var(--muted); margin: 0 0 12px; }
.banner { border: 2px solid #D55E00; background: #fff4ec; padding: 8px 12px; font-weight: 600; margin: 12px 0; }
.projection { border: 2px dashed #0072B2; background: #f1f7fc; padding: 8px 12px; margin: 12px 0; }
.kpis { display: flex; gap: 12px; flex-wrap: wrap; margin: 12px 0 8px; }
.kpi { border: 1px solid var(--rule); border-radius: 6px; padding: 8px 12px; min-width: 180px; }
.kpi b { display: block; font-size: 20px; }
figure.chart { margin: 18px 0; padding: 10px 12px; border: 1px solid var(--rule); border-radius: 6px; break-inside: avoid; page-break-inside: avoid; }
figcaption h2 { font-size: 16px; margin: 0; }
figcaption p { margin: 2px 0 6px; color: var(--muted); }
svg { width: 100%; height: auto; display: block; }
svg .grid { stroke: #e6e9ed; stroke-width: 1; }
svg .tick, svg .label, svg .value { font-size: 11px; fill: var(--muted); }
svg .label { fill: var(--ink); }
ul.legend { list-style: none; padding: 0; margin: 6px 0 0; display: flex; flex-wrap: wrap; gap: 4px 14px; font-size: 12px; }
.swatch { display: inline-block; width: 10px; height: 10px; margin-right: 5px; vertical-align: -1px; }
.empty { color: var(--muted); font-style: italic; }
table { border-collapse: collapse; width: 100%; font-size: 12px; margin-top: 8px; }
th, td { border-bottom: 1px solid var(--rule); padding: 3px 6px; text-align: left; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
footer { color: var(--muted); font-size: 12px; margin-top: 24px; }
@media print {
  @page { size: A4 landscape; margin: 12mm; }
  body { margin: 0; max-width: none; font-size: 11px; }
  figure.chart { border-color: #bbb; }
  a { color: inherit; text-decoration: none; }
}
`;

// Publishes what was drawn: per chart the number of data marks and whether that matches the
// data-points the generator declared. Read by tests through the DevTools protocol.
const SCRIPT = `(function () {
  var out = {};
  document.querySelectorAll('figure[data-chart]').forEach(function (f) {
    var marks = f.querySelectorAll('.mark').length;
    out[f.getAttribute('data-chart')] = { declared: Number(f.getAttribute('data-points')), marks: marks };
  });
  window.__charts = out;
})();`;

/** The days of the period, and each day's index by its key. */
type Days = { days: Date[]; dayIndex: Map<string, number> };

const countPoints = (ss: { values: (number | null)[] }[]) =>
  ss.reduce((a, s) => a + s.values.filter((v) => v !== null).length, 0);

/** Renders the charts report. */
export function renderReportHtml(r: HtmlReportInput): string {
  const cur = r.currency;
  const moneyAxis = (v: number) => (cur === 'USD' ? `$${fmtNum(v)}` : `${fmtNum(v)} ${cur}`);
  const days = daysOf(r.rangeStart, r.rangeEnd);
  const dayIndex = new Map(days.map((d, i) => [dayKey(d), i]));
  const { programCount, shown, others, series, dailyPoints, topBars, topShare } = spendSeries(r, { days, dayIndex });
  const { storageSeries, snapSeries, snapCaption, transferSeries, transferCost, transferPoints } = trendSeries(r, {
    days,
    dayIndex,
  });
  const f = r.forecast && r.forecast.current ? r.forecast : null;
  const forecastHtml = f ? forecastFigure(r, f, { days, dayIndex }, moneyAxis) : '';

  const kpis = [
    [`Total ${r.partial ? '(partial)' : ''}`, formatMoney(r.total, cur)],
    ['Programs', programCount.toLocaleString('en-US')],
    ['Transfer cost', formatMoney(transferCost.toFixed(2), cur)],
    ...(f
      ? [['Projected month end', f.totals.projection === null ? 'n/a' : formatMoney(f.totals.projection, cur)]]
      : []),
  ];

  const body = [
    figure(
      'daily-spend',
      'Daily spend per program',
      `Stacked by program: the ${shown.length} largest of the period (${topShare}% of the total, as in the next chart)` +
        `${others > 0 ? `, the other ${others.toLocaleString('en-US')} together (grey)` : ''}. Each line's rounded cost is spread over its days by billable usage, so the days add up to the total.`,
      stackedColumns(days, series, moneyAxis, ''),
      dailyPoints,
      legend(
        series.map((s) => s.name),
        series.map((s) => s.color),
      ),
    ),
    figure(
      'top-programs',
      'Top programs by cost',
      `All metrics, the period's total per program: the ${shown.length} largest${others > 0 ? ' and the rest together' : ''}; the bars add up to the total.`,
      bars(topBars),
      topBars.length,
    ),
    figure(
      'top-frameworks',
      'Top frameworks by cost',
      'The six framework metrics; usage no current framework accounts for is left out.',
      bars(
        r.topFrameworks.map((p) => ({
          label: `${p.name} (${p.program_name})`,
          value: Number(p.cost),
          text: formatMoney(p.cost, cur),
        })),
      ),
      r.topFrameworks.length,
    ),
    ...trendFigures(days, { storageSeries, snapSeries, snapCaption, transferSeries, transferPoints }),
  ];

  return page(r, f, kpis, forecastHtml, body);
}

/** The storage, snapshot and transfer figures, over the period's days. */
function trendFigures(
  days: Date[],
  t: Pick<
    ReturnType<typeof trendSeries>,
    'storageSeries' | 'snapSeries' | 'snapCaption' | 'transferSeries' | 'transferPoints'
  >,
): string[] {
  const { storageSeries, snapSeries, snapCaption, transferSeries, transferPoints } = t;
  return [
    figure(
      'storage',
      'Storage trend',
      'GB-month accrued per day, per storage metric, over all programs.',
      lines(days, storageSeries, (v) => fmtNum(v, 3), ' GB-month'),
      countPoints(storageSeries),
      legend(storageSeries.map((s) => s.name)),
    ),
    figure(
      'snapshots',
      'Snapshot trend',
      snapCaption,
      lines(days, snapSeries, (v) => fmtNum(v, 0), '', { integer: true }),
      countPoints(snapSeries),
      legend(['snapshots']),
    ),
    figure(
      'transfer',
      'Transfer per day',
      'Public and private network transfer, GB (10^9 bytes) per day, over all programs.',
      stackedColumns(days, transferSeries, (v) => fmtNum(v, 3), ' GB'),
      transferPoints,
      legend(transferSeries.map((s) => s.name)),
    ),
  ];
}

/**
 * Daily spend, stacked by program, and the top programs: the same programs in both (ranked in SQL by the
 * period's cost), the rest as one "Other programs" series, so the columns and the bars add up to the total.
 */
function spendSeries(r: HtmlReportInput, { days, dayIndex }: Days) {
  const cur = r.currency;
  const programCount = r.programCount ?? new Set(r.dailySpend.map((d) => d.program_id)).size;
  const shown = r.topPrograms.slice(0, TOP_PROGRAMS);
  const others = Math.max(0, programCount - shown.length);
  const seriesIndex = new Map(shown.map((p, i) => [p.program_id, i]));
  const series: { name: string; values: number[]; color?: string }[] = shown.map((p) => ({
    name: p.name,
    values: days.map(() => 0),
  }));
  const otherName = `Other programs (${others.toLocaleString('en-US')})`;
  if (others > 0) series.push({ name: otherName, values: days.map(() => 0), color: OTHER_COLOR });
  let dailyPoints = 0;
  for (const d of r.dailySpend) {
    const i = dayIndex.get(dayKey(d.day));
    if (i === undefined) continue;
    const s = series[(d.program_id === null ? undefined : seriesIndex.get(d.program_id)) ?? shown.length];
    if (!s) continue;
    s.values[i]! += Number(d.cost);
  }
  for (const s of series) dailyPoints += s.values.filter((v) => v > 0).length;
  const shownCents = shown.reduce((a, p) => a + BigInt(p.cost.replace('.', '')), 0n);
  const otherCents = BigInt(r.total.replace('.', '')) - shownCents;
  const otherCost = `${otherCents < 0n ? '-' : ''}${(otherCents < 0n ? -otherCents : otherCents) / 100n}.${String((otherCents < 0n ? -otherCents : otherCents) % 100n).padStart(2, '0')}`;
  const topBars = [
    ...shown.map((p) => ({ label: p.name, value: Number(p.cost), text: formatMoney(p.cost, cur) })),
    ...(others > 0
      ? [{ label: otherName, value: Number(otherCost), text: formatMoney(otherCost, cur), color: OTHER_COLOR }]
      : []),
  ];
  const topShare =
    Number(r.total) > 0 ? ((100 * Number(shownCents)) / Number(BigInt(r.total.replace('.', '')))).toFixed(1) : '0.0';

  return { programCount, shown, others, series, dailyPoints, topBars, topShare };
}

/** Storage per metric, snapshot count and transfer per day. */
function trendSeries(r: HtmlReportInput, { days, dayIndex }: Days) {
  const storageMetrics = [...new Set(r.storage.map((s) => s.metric))].sort();
  const storageSeries = storageMetrics.map((m) => ({ name: m, values: days.map((): number | null => null) }));
  for (const s of r.storage) {
    const i = dayIndex.get(dayKey(s.day));
    if (i !== undefined) storageSeries[storageMetrics.indexOf(s.metric)]!.values[i] = Number(s.gb_month);
  }
  // Snapshots are only known since the inventory first saw them: earlier days are not drawn (not 0).
  const snapSeries = [{ name: 'snapshots', values: days.map((): number | null => null) }];
  for (const s of r.snapshots) {
    const i = dayIndex.get(dayKey(s.day));
    if (i !== undefined && s.snapshots !== null) snapSeries[0]!.values[i] = Number(s.snapshots);
  }
  const knownFrom = r.snapshots.find((s) => s.known_from !== null)?.known_from ?? null;
  const snapCaption =
    knownFrom === null
      ? 'Snapshots existing each day, from the inventory: the inventory has not listed snapshots yet, so none are drawn.'
      : `Snapshots existing each day (manual and scheduled), from the inventory. Snapshots are known from ${knownFrom.toISOString().slice(0, 16).replace('T', ' ')} UTC ` +
        '(when the inventory first listed them); days before that are not drawn.';

  // Transfer per day, public and private stacked.
  const transferMetrics = [...new Set(r.transfer.map((t) => t.metric))].sort().reverse();
  const transferSeries = transferMetrics.map((m) => ({ name: m, values: days.map(() => 0) }));
  let transferCost = 0;
  for (const t of r.transfer) {
    const i = dayIndex.get(dayKey(t.day));
    if (i !== undefined) transferSeries[transferMetrics.indexOf(t.metric)]!.values[i]! += Number(t.gb);
    transferCost += Number(t.cost);
  }
  const transferPoints = transferSeries.reduce((a, s) => a + s.values.filter((v) => v > 0).length, 0);

  return { storageSeries, snapSeries, snapCaption, transferSeries, transferCost, transferPoints };
}

/** The month-end forecast: cumulative actual spend per complete day, then the projection from the last complete day on. */
function forecastFigure(
  r: HtmlReportInput,
  f: NonNullable<HtmlReportInput['forecast']>,
  { days, dayIndex }: Days,
  moneyAxis: (v: number) => string,
): string {
  const cur = r.currency;
  const byDay = days.map(() => 0);
  for (const d of r.dailySpend) {
    const i = dayIndex.get(dayKey(d.day));
    if (i !== undefined && i < f.completeDays) byDay[i]! += Number(d.cost);
  }
  const actual: (number | null)[] = [];
  let acc = 0;
  days.forEach((_, i) => {
    acc += byDay[i]!;
    actual.push(i < f.completeDays ? acc : null);
  });
  const projected: (number | null)[] = days.map(() => null);
  if (f.totals.projection !== null && f.completeDays > 0) {
    const base = Number(f.totals.completeDaysSpend);
    const perDay = f.remainingDays > 0 ? (Number(f.totals.projection) - base) / f.remainingDays : 0;
    for (let i = f.completeDays - 1; i < days.length; i++) projected[i] = base + perDay * (i - (f.completeDays - 1));
  }
  const fpoints = countPoints([{ values: actual }, { values: projected }]);
  const rows = [...f.programs]
    .sort((a, b) => Number(b.projection ?? b.monthToDate) - Number(a.projection ?? a.monthToDate))
    .map(
      (p) =>
        `<tr><td>${escapeHtml(p.programName)}</td><td>${escapeHtml(p.programId)}</td><td class="num">${formatMoney(p.monthToDate, cur)}</td>` +
        `<td class="num">${formatMoney(p.dailyTrend, cur)}</td><td class="num">${p.projection === null ? 'n/a' : formatMoney(p.projection, cur)}</td></tr>`,
    )
    .join('');
  return figure(
    'forecast',
    'Month-end forecast (PROJECTION)',
    `Cumulative spend over complete days (solid) and the projection to the end of the period (dashed). ${f.method}`,
    lines(
      days,
      [
        { name: 'actual, cumulative', values: actual, color: PALETTE[0] },
        { name: 'projection', values: projected, dashed: true, color: PALETTE[5] },
      ],
      moneyAxis,
      '',
    ),
    fpoints,
    legend(['actual, cumulative (complete days)', 'projection (dashed)']) +
      `<table><thead><tr><th>program</th><th>id</th><th class="num">month to date</th><th class="num">daily trend</th><th class="num">projected total</th></tr></thead><tbody>${rows}</tbody>` +
      `<tfoot><tr><th colspan="2">Total</th><th class="num">${formatMoney(f.totals.monthToDate, cur)}</th><th></th><th class="num">${f.totals.projection === null ? 'n/a' : formatMoney(f.totals.projection, cur)}</th></tr></tfoot></table>`,
  );
}

/** The page around the figures. */
function page(
  r: HtmlReportInput,
  f: HtmlReportInput['forecast'] | null,
  kpis: string[][],
  forecastHtml: string,
  body: string[],
): string {
  const cur = r.currency;
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(r.title)}</title>
<style>${STYLE}</style>
</head>
<body>
<header>
<h1>${escapeHtml(r.title)}</h1>
<p class="meta">Period ${escapeHtml(r.rangeStart.toISOString())} to ${escapeHtml(r.rangeEnd.toISOString())} (UTC, end exclusive) · generated ${escapeHtml(r.generatedAt.toISOString())} · data granularity ${escapeHtml(r.granularity)} · price book ${escapeHtml(r.priceBookRevision)} · ${escapeHtml(cur)}</p>
${r.partial ? '<p class="banner">PARTIAL: the period is not completely collected; figures cover what was collected.</p>' : ''}
${r.unpricedLines > 0 ? `<p class="banner" id="unpriced">UNPRICED: ${r.unpricedLines} line(s) have no rate in the price book. Their cost is blank (not 0): it is in no total or chart here; the workbook's Summary lists them.</p>` : ''}
${r.assumed.used.length > 0 ? `<p class="banner" id="assumed">ASSUMED RATES: ${escapeHtml(formatMoney(r.assumed.amount, cur))} of the total (${escapeHtml(r.assumed.share)}%) rests on ${r.assumed.used.length} rate(s) the price book marks assumed (${escapeHtml(r.assumed.used.map((x) => x.rate_id).join(', '))}).</p>` : ''}
${f ? `<p class="projection"><b>Projection.</b> ${escapeHtml(f.method)}</p>` : ''}
<div class="kpis">${kpis.map(([k, v]) => `<div class="kpi">${escapeHtml(k!)}<b>${escapeHtml(v!)}</b></div>`).join('')}</div>
</header>
<main>
${forecastHtml}
${r.alertsHtml ?? ''}
${body.join('\n')}
</main>
<footer>Totals are sums of lines rounded to cents once (half-up). Figures per day spread each line's rounded cost over its days. See the workbook usage-${escapeHtml(r.periodLabel)}.xlsx for every line.</footer>
<script>${SCRIPT}</script>
</body>
</html>
`;
}

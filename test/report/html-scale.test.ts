// The charts report at scale and with partial knowledge: 10,000 programs are drawn as the same top
// programs in both program charts plus one "Other programs" series, and the charts add up to the
// total; the snapshot chart draws only days since snapshots are known, with whole-number ticks.
import { describe, expect, test } from 'vitest';
import { TOP_PROGRAMS, renderReportHtml, type HtmlReportInput } from '../../src/report/html.js';

const DAY = 86_400_000;
const start = Date.UTC(2026, 9, 1);
const days = Array.from({ length: 31 }, (_, i) => new Date(start + i * DAY));
const PROGRAMS = 10_000;

function input(): HtmlReportInput {
  // Program i spends (i % 97 + 1) cents a day: many small programs, none dominant.
  const dailySpend: HtmlReportInput['dailySpend'] = [];
  const perProgram: { program_id: string; name: string; cents: bigint }[] = [];
  for (let p = 0; p < PROGRAMS; p++) {
    const cents = BigInt((p % 97) + 1);
    perProgram.push({ program_id: `p-${String(p).padStart(5, '0')}`, name: `program ${p}`, cents: cents * 31n });
    for (const d of days)
      dailySpend.push({
        program_id: `p-${String(p).padStart(5, '0')}`,
        program_name: `program ${p}`,
        day: d,
        cost: (Number(cents) / 100).toFixed(2),
      });
  }
  const totalCents = perProgram.reduce((a, p) => a + p.cents, 0n);
  const money = (c: bigint) => `${c / 100n}.${String(c % 100n).padStart(2, '0')}`;
  const top = [...perProgram]
    .sort((a, b) => (b.cents > a.cents ? 1 : b.cents < a.cents ? -1 : a.program_id < b.program_id ? -1 : 1))
    .slice(0, TOP_PROGRAMS);
  const knownFrom = new Date(start + 20 * DAY + 3_600_000);
  return {
    title: 't',
    periodLabel: '2026-10',
    rangeStart: new Date(start),
    rangeEnd: new Date(start + 31 * DAY),
    generatedAt: new Date(start + 40 * DAY),
    partial: false,
    currency: 'USD',
    total: money(totalCents),
    granularity: 'daily',
    priceBookRevision: 'r',
    unpricedLines: 0,
    assumed: { marked: 0, used: [], amount: '0.00', share: '0.00' },
    dailySpend,
    topPrograms: top.map((p) => ({ program_id: p.program_id, name: p.name, cost: money(p.cents) })),
    topFrameworks: [],
    storage: [],
    // One snapshot per day once known (days 20..30), unknown (null) before.
    snapshots: days.map((d, i) => ({
      day: d,
      snapshots: i >= 20 ? 1 : null,
      manual: i >= 20 ? 0 : null,
      scheduled: i >= 20 ? 1 : null,
      known_from: knownFrom,
    })),
    transfer: [],
    forecast: null,
  };
}

function figure(html: string, id: string): string {
  const a = html.indexOf(`id="chart-${id}"`);
  return html.slice(a, html.indexOf('</figure>', a));
}

describe('charts of 10,000 programs', () => {
  const r = input();
  const html = renderReportHtml(r);

  test('the daily chart and the top-programs chart show the same top programs and the rest as "Other programs"', () => {
    const legend = [...figure(html, 'daily-spend').matchAll(/<li><span[^>]*><\/span>([^<]*)<\/li>/g)].map((m) => m[1]);
    expect(legend).toEqual([
      ...r.topPrograms.map((p) => p.name),
      `Other programs (${(PROGRAMS - TOP_PROGRAMS).toLocaleString('en-US')})`,
    ]);
    const bars = [...figure(html, 'top-programs').matchAll(/<text class="label"[^>]*>([^<]*)<\/text>/g)].map(
      (m) => m[1],
    );
    expect(bars).toEqual(legend);
  });

  test('the top-program bars add up to the total, to the cent', () => {
    const values = [...figure(html, 'top-programs').matchAll(/<text class="value"[^>]*>\$([\d,.]+)<\/text>/g)].map(
      (m) => m[1]!.replace(/,/g, ''),
    );
    const cents = values.reduce((a, v) => a + BigInt(v.replace('.', '')), 0n);
    expect(cents).toBe(BigInt(r.total.replace('.', '')));
  });

  test('the daily columns add up to the total', () => {
    const amounts = [
      ...figure(html, 'daily-spend').matchAll(/<title>\d{4}-\d{2}-\d{2} [^:]*: \$([\d,.]+)<\/title>/g),
    ].map((m) => Number(m[1]!.replace(/,/g, '')));
    expect(Math.round(amounts.reduce((a, v) => a + v, 0) * 100)).toBe(Number(BigInt(r.total.replace('.', ''))));
  });
});

describe('the daily chart from per-day sums (the top programs, the others together)', () => {
  // What the report reads from DuckDB at scale (chart_daily_spend.sql): one row per top program and
  // day, the other programs summed per day with program_id null, and the number of programs.
  test('draws the same page as one row per program and day', () => {
    const full = input();
    const top = new Set(full.topPrograms.map((p) => p.program_id));
    const cents = new Map<string, { id: string | null; name: string | null; day: Date; cents: bigint }>();
    for (const d of full.dailySpend) {
      const id = top.has(d.program_id!) ? d.program_id : null;
      const key = `${id}|${d.day.toISOString()}`;
      const e = cents.get(key) ?? { id, name: id === null ? null : d.program_name, day: d.day, cents: 0n };
      e.cents += BigInt(d.cost.replace('.', ''));
      cents.set(key, e);
    }
    const money = (c: bigint) => `${c / 100n}.${String(c % 100n).padStart(2, '0')}`;
    const summed: HtmlReportInput = {
      ...full,
      dailySpend: [...cents.values()].map((e) => ({
        program_id: e.id,
        program_name: e.name,
        day: e.day,
        cost: money(e.cents),
      })),
      programCount: PROGRAMS,
    };
    expect(summed.dailySpend.length).toBe((TOP_PROGRAMS + 1) * days.length);
    expect(renderReportHtml(summed)).toBe(renderReportHtml(full));
  });
});

describe('the snapshot chart', () => {
  const html = renderReportHtml(input());
  const fig = figure(html, 'snapshots');

  test('says from when snapshots are known and draws only those days', () => {
    expect(fig).toContain('Snapshots are known from 2026-10-21 01:00 UTC');
    expect(fig).toContain('data-points="11"');
    expect((fig.match(/class="mark"/g) ?? []).length).toBe(11);
  });

  test('counts its axis in whole numbers', () => {
    const ticks = [...fig.matchAll(/<text class="tick" x="[\d.]+" y="[\d.]+" text-anchor="end">([^<]*)<\/text>/g)].map(
      (m) => m[1],
    );
    expect(ticks).toEqual(['0', '1', '2', '3', '4']);
  });
});

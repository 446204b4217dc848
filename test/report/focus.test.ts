// The FOCUS 1.2 export checked against the specification's rules (written out here, independently of
// the code): columns, types, nullability, allowed values, units, cost identities; BilledCost adds up
// to the workbook's total to the cent without double counting; and corrections after finalisation.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import ExcelJS from 'exceljs';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { FocusFinalizeError } from '../../src/report/focus.js';
import { runReport, type ReportResult } from '../../src/report/run.js';
import { loadMonth, type Loaded } from '../support/month.js';

const MONTH = '2025-10';
const BOOK = 'config/prices.toml';

type Kind = 'Decimal' | 'String' | 'DateTime';
// FOCUS 1.2 columns this export provides: type and whether the column allows nulls (Mandatory
// columns first, then the Conditional ones that apply to this service).
const FOCUS_1_2: Record<string, { kind: Kind; nulls: boolean }> = {
  BilledCost: { kind: 'Decimal', nulls: false },
  BillingAccountId: { kind: 'String', nulls: false },
  BillingAccountName: { kind: 'String', nulls: true },
  BillingCurrency: { kind: 'String', nulls: false },
  BillingPeriodEnd: { kind: 'DateTime', nulls: false },
  BillingPeriodStart: { kind: 'DateTime', nulls: false },
  ChargeCategory: { kind: 'String', nulls: false },
  ChargeClass: { kind: 'String', nulls: true },
  ChargeDescription: { kind: 'String', nulls: true },
  ChargePeriodEnd: { kind: 'DateTime', nulls: false },
  ChargePeriodStart: { kind: 'DateTime', nulls: false },
  ContractedCost: { kind: 'Decimal', nulls: false },
  EffectiveCost: { kind: 'Decimal', nulls: false },
  InvoiceIssuerName: { kind: 'String', nulls: false },
  ListCost: { kind: 'Decimal', nulls: false },
  PricingQuantity: { kind: 'Decimal', nulls: true },
  PricingUnit: { kind: 'String', nulls: true },
  ProviderName: { kind: 'String', nulls: false },
  PublisherName: { kind: 'String', nulls: false },
  ServiceCategory: { kind: 'String', nulls: false },
  ServiceName: { kind: 'String', nulls: false },
  // Conditional
  ChargeFrequency: { kind: 'String', nulls: false },
  ConsumedQuantity: { kind: 'Decimal', nulls: true },
  ConsumedUnit: { kind: 'String', nulls: true },
  ContractedUnitPrice: { kind: 'Decimal', nulls: true },
  ListUnitPrice: { kind: 'Decimal', nulls: true },
  ResourceId: { kind: 'String', nulls: true },
  ResourceName: { kind: 'String', nulls: true },
  ResourceType: { kind: 'String', nulls: true },
  SkuId: { kind: 'String', nulls: true },
  SkuPriceId: { kind: 'String', nulls: true },
  SubAccountId: { kind: 'String', nulls: true },
  SubAccountName: { kind: 'String', nulls: true },
};
// Not null on a Usage row that is not a correction.
const NOT_NULL_ON_USAGE = ['PricingQuantity', 'PricingUnit', 'ListUnitPrice', 'ContractedUnitPrice', 'SkuId', 'SkuPriceId', 'ConsumedQuantity', 'ConsumedUnit', 'ResourceId', 'SubAccountId'];
const CHARGE_CATEGORIES = ['Adjustment', 'Credit', 'Purchase', 'Tax', 'Usage'];
const CHARGE_FREQUENCIES = ['One-Time', 'Recurring', 'Usage-Based'];
const SERVICE_CATEGORIES = ['AI and Machine Learning', 'Analytics', 'Business Applications', 'Compute', 'Databases', 'Developer Tools',
  'Multicloud', 'Identity', 'Integration', 'Internet of Things', 'Management and Governance', 'Media', 'Migration', 'Mobile',
  'Networking', 'Security', 'Storage', 'Web', 'Other'];
// UnitFormat: base units joined by '-', data sizes as abbreviations, time units capitalised and plural at the end.
const UNIT = /^(?:(?:[KMGTPE]i?[bB]|[bB])|[A-Z][A-Za-z]*)(?:-(?:Years|Months|Days|Hours|Minutes|Seconds|[A-Z][A-Za-z]*s))?$/;
const DUCK_TYPE: Record<Kind, RegExp> = { Decimal: /^DECIMAL\(\d+,\d+\)$/, String: /^VARCHAR$/, DateTime: /^TIMESTAMP WITH TIME ZONE$/ };

const focusPath = (r: ReportResult) => r.files.find((f) => f.path.includes(`focus-${MONTH}.parquet`))!.path;
const rp = (p: string) => `read_parquet('${p}')`;

describe('the FOCUS 1.2 file of a complete month', () => {
  let L: Loaded;
  let r: ReportResult;
  let path: string;
  beforeAll(async () => {
    L = await loadMonth({ month: MONTH });
    r = await runReport({ store: L.store, month: MONTH, outDir: join(L.dir, 'reports'), formats: ['parquet', 'xlsx', 'focus'], priceBookPath: BOOK, now: new Date(L.now) });
    path = focusPath(r);
  });
  afterAll(async () => {
    await L?.store.close();
  });

  test('has every column with its FOCUS type, FOCUS columns first and extra columns prefixed x_', async () => {
    const cols = await L.store.query<{ column_name: string; column_type: string }>(`DESCRIBE SELECT * FROM ${rp(path)}`);
    const names = cols.map((c) => c.column_name);
    for (const [name, rule] of Object.entries(FOCUS_1_2)) {
      const c = cols.find((x) => x.column_name === name);
      if (!c) expect.fail(`missing FOCUS column ${name}`);
      expect(c.column_type, name).toMatch(DUCK_TYPE[rule.kind]);
    }
    const firstX = names.findIndex((n) => n.startsWith('x_'));
    expect(firstX).toBe(Object.keys(FOCUS_1_2).length);
    expect(names.slice(firstX).every((n) => n.startsWith('x_'))).toBe(true);
    expect(names).toEqual(expect.arrayContaining(['x_Plan', 'x_Granularity', 'x_PriceBookRevision']));
    // Date-times are Parquet timestamps adjusted to UTC, whole seconds.
    const schema = await L.store.query<{ name: string; logical_type: string }>(`SELECT name, logical_type FROM parquet_schema('${path}')`);
    for (const n of ['BillingPeriodStart', 'BillingPeriodEnd', 'ChargePeriodStart', 'ChargePeriodEnd'])
      expect(schema.find((s) => s.name === n)!.logical_type).toMatch(/isAdjustedToUTC=1/);
  });

  test('nullability, allowed values, date-times and units follow the 1.2 rules', async () => {
    const n = (await L.store.query<{ n: bigint }>(`SELECT count(*) AS n FROM ${rp(path)}`))[0]!.n;
    expect(n).toBeGreaterThan(1000n);
    for (const [name, rule] of Object.entries(FOCUS_1_2)) {
      if (rule.nulls) continue;
      const [x] = await L.store.query<{ n: bigint }>(`SELECT count(*) AS n FROM ${rp(path)} WHERE "${name}" IS NULL`);
      expect(x!.n, `${name} must not be null`).toBe(0n);
    }
    for (const name of NOT_NULL_ON_USAGE) {
      const [x] = await L.store.query<{ n: bigint }>(`SELECT count(*) AS n FROM ${rp(path)} WHERE "ChargeCategory" = 'Usage' AND "ChargeClass" IS NULL AND "${name}" IS NULL`);
      expect(x!.n, `${name} must not be null on a Usage row`).toBe(0n);
    }
    const distinct = async (c: string) => (await L.store.query<{ v: string | null }>(`SELECT DISTINCT "${c}" AS v FROM ${rp(path)}`)).map((x) => x.v);
    for (const v of await distinct('ChargeCategory')) expect(CHARGE_CATEGORIES).toContain(v);
    for (const v of await distinct('ChargeClass')) expect([null, 'Correction']).toContain(v);
    for (const v of await distinct('ChargeFrequency')) expect(CHARGE_FREQUENCIES).toContain(v);
    for (const v of await distinct('ServiceCategory')) expect(SERVICE_CATEGORIES).toContain(v);
    for (const v of await distinct('BillingCurrency')) expect(v).toMatch(/^[A-Z]{3}$/);
    const units = [...new Set([...(await distinct('PricingUnit')), ...(await distinct('ConsumedUnit'))])].sort();
    for (const u of units) expect(u).toMatch(UNIT);
    expect(units).toEqual(expect.arrayContaining(['GB', 'GB-Months', 'CU-Hours', 'Hours', 'Branch-Months']));

    const [bad] = await L.store.query<Record<string, bigint>>(`
      SELECT
        count(*) FILTER (WHERE "ChargePeriodStart" >= "ChargePeriodEnd") AS empty_period,
        count(*) FILTER (WHERE "ChargePeriodStart" < "BillingPeriodStart" OR "ChargePeriodEnd" > "BillingPeriodEnd") AS outside_billing,
        count(*) FILTER (WHERE "BillingPeriodStart" <> TIMESTAMPTZ '${MONTH}-01 00:00:00+00' OR "BillingPeriodEnd" <> TIMESTAMPTZ '2025-11-01 00:00:00+00') AS wrong_billing,
        count(*) FILTER (WHERE epoch_ms("ChargePeriodStart") % 1000 <> 0 OR epoch_ms("ChargePeriodEnd") % 1000 <> 0) AS fractional_seconds,
        count(*) FILTER (WHERE "ListCost" <> "ListUnitPrice" * "PricingQuantity") AS list_not_product,
        count(*) FILTER (WHERE "ContractedCost" <> "ContractedUnitPrice" * "PricingQuantity") AS contracted_not_product,
        count(*) FILTER (WHERE "EffectiveCost" <> "BilledCost") AS effective_differs,
        count(*) FILTER (WHERE "ListUnitPrice" < 0 OR "ContractedUnitPrice" < 0) AS negative_price,
        -- GB is 10^9 bytes (quantities carry 6 decimals, so within half a micro-GB of the raw bytes).
        count(*) FILTER (WHERE "PricingUnit" IN ('GB', 'GB-Months') AND abs("ConsumedQuantity" * 1000000000 - "x_ConsumedQuantityRaw") > 500
                           AND "x_Metric" NOT LIKE '%bytes_hour') AS gb_not_1e9,
        -- Charge periods are UTC days; a gauge (priced on its peak) spans its line instead.
        count(*) FILTER (WHERE "x_Metric" NOT IN ('synthetic_storage_size_bytes', 'logical_size_bytes') AND (
          strftime("ChargePeriodStart", '%Y-%m-%dT%H:%M:%SZ') NOT SIMILAR TO '\\d{4}-\\d{2}-\\d{2}T00:00:00Z'
          OR "ChargePeriodEnd" <> "ChargePeriodStart" + INTERVAL 1 DAY)) AS not_utc_day
      FROM ${rp(path)}`);
    expect(bad).toEqual({ empty_period: 0n, outside_billing: 0n, wrong_billing: 0n, fractional_seconds: 0n, list_not_product: 0n,
      contracted_not_product: 0n, effective_differs: 0n, negative_price: 0n, gb_not_1e9: 0n, not_utc_day: 0n });
  });

  test('sum(BilledCost) equals the workbook total to the cent, per program too: no double counting', async () => {
    const [s] = await L.store.query<{ billed: string }>(`SELECT CAST(sum("BilledCost") AS DECIMAL(18,2)) AS billed FROM ${rp(path)}`);
    expect(s!.billed).toBe(r.total);
    const wb = new ExcelJS.Workbook();
    await wb.xlsx.readFile(r.files.find((f) => f.path.endsWith('.xlsx'))!.path);
    let workbookTotal: number | undefined;
    wb.getWorksheet('Summary')!.eachRow((row) => {
      if (row.getCell(1).value === 'Total' && workbookTotal === undefined) workbookTotal = row.getCell(5).value as number;
    });
    expect(Math.round(workbookTotal! * 100)).toBe(Number(s!.billed.replace('.', '')));

    const dir = r.dir;
    const diff = await L.store.query(`
      WITH f AS (SELECT "SubAccountId" AS program_id, sum("BilledCost") AS c FROM ${rp(path)} GROUP BY 1),
           p AS (SELECT program_id, sum(coalesce(cost, 0)) AS c FROM ${rp(join(dir, 'program_spend.parquet'))} GROUP BY 1)
      SELECT coalesce(f.program_id, p.program_id) AS program_id, f.c AS focus, p.c AS workbook
      FROM f FULL OUTER JOIN p ON f.program_id = p.program_id WHERE f.c IS DISTINCT FROM p.c`);
    expect(diff).toEqual([]);
    // Framework and unattributed rows together are framework_spend, framework rows are its framework lines.
    const [fw] = await L.store.query<{ a: string; b: string; c: string; d: string }>(`
      SELECT (SELECT CAST(sum("BilledCost") AS DECIMAL(18,2)) FROM ${rp(path)} WHERE "x_LineType" IN ('framework', 'unattributed')) AS a,
             (SELECT CAST(sum(coalesce(cost, 0)) AS DECIMAL(18,2)) FROM ${rp(join(dir, 'framework_spend.parquet'))}) AS b,
             (SELECT CAST(sum("BilledCost") AS DECIMAL(18,2)) FROM ${rp(path)} WHERE "x_LineType" = 'framework') AS c,
             (SELECT CAST(sum(coalesce(cost, 0)) AS DECIMAL(18,2)) FROM ${rp(join(dir, 'framework_spend.parquet'))} WHERE line_type = 'framework') AS d`);
    expect(fw!.a).toBe(fw!.b);
    expect(fw!.c).toBe(fw!.d);
  });

  test('unpriced usage appears at cost 0 with x_Unpriced and the reason', async () => {
    const [u] = await L.store.query<{ n: bigint; cost: string; reasons: bigint }>(`
      SELECT count(*) AS n, CAST(sum(abs("BilledCost")) + sum(abs("ListCost")) AS DECIMAL(38,12)) AS cost,
             count(*) FILTER (WHERE "x_UnpricedReason" LIKE 'unpriced:%') AS reasons
      FROM ${rp(path)} WHERE "x_Unpriced"`);
    expect(u!.n).toBeGreaterThan(0n);
    expect(Number(u!.cost)).toBe(0);
    expect(u!.reasons).toBe(u!.n);
    const manifest = JSON.parse(readFileSync(join(r.dir, 'manifest.json'), 'utf8'));
    expect(manifest.files.map((f: { name: string }) => f.name)).toContain(`focus-${MONTH}.parquet`);
    expect(manifest.focus).toMatchObject({ version: '1.2', rows: r.focus!.rows, corrections: 0, billed_total: r.total });
  });
});

describe('corrections after finalisation', () => {
  let L: Loaded;
  const out = () => join(L.dir, 'reports');
  const run = (o: { finalize?: boolean; now?: number } = {}) =>
    runReport({ store: L.store, month: MONTH, outDir: out(), formats: ['focus'], priceBookPath: BOOK, now: new Date(o.now ?? L.now), ...(o.finalize ? { finalize: true } : {}) });
  const rows = (p: string) => L.store.query(`SELECT * FROM ${rp(p)}`);
  beforeAll(async () => {
    L = await loadMonth({ month: MONTH });
  });
  afterAll(async () => {
    await L?.store.close();
  });

  test('a month is finalised only when complete and over', async () => {
    await expect(runReport({ store: L.store, month: MONTH, outDir: out(), formats: ['focus'], priceBookPath: BOOK, now: new Date('2025-10-20T00:00:00Z'), finalize: true }))
      .rejects.toBeInstanceOf(FocusFinalizeError);
    expect(await L.store.query('SELECT * FROM report_finalizations')).toEqual([]);
  });

  test('finalised rows are kept unchanged and differences become Correction rows', async () => {
    const before = await run();
    const original = await rows(focusPath(before));
    const fin = await run({ finalize: true });
    expect(fin.focus!.finalized).toMatchObject({ finalizationId: `${MONTH}#1`, rows: original.length, billedTotal: before.total });
    expect(fin.files.find((f) => f.path.includes('focus-'))!.sha256).toBe(before.files.find((f) => f.path.includes('focus-'))!.sha256);

    // Nothing changed: the same file again, no corrections.
    const same = await run({ now: L.now + 86_400_000 });
    expect(same.focus!.corrections).toBe(0);
    expect(same.files.find((f) => f.path.includes('focus-'))!.sha256).toBe(before.files.find((f) => f.path.includes('focus-'))!.sha256);

    // A restated bucket: one program's compute on one day grows by 100 CU-hours on a priced plan.
    const [target] = await L.store.query<{ program_id: string; timeframe_start: Date; period_plan: string }>(`
      SELECT program_id, timeframe_start, period_plan FROM usage_program
      WHERE granularity = 'daily' AND metric = 'compute_unit_seconds' AND period_plan IN ('launch', 'scale')
        AND timeframe_start = TIMESTAMPTZ '2025-10-12 00:00:00+00'
      ORDER BY program_id LIMIT 1`);
    await L.store.run(`UPDATE usage_program_buckets SET compute_unit_seconds = compute_unit_seconds + 360000 WHERE granularity = 'daily'
      AND compute_unit_seconds IS NOT NULL AND program_id = $p AND timeframe_start = $t`, { p: target!.program_id, t: target!.timeframe_start });

    const after = await run({ now: L.now + 2 * 86_400_000 });
    const written = await rows(focusPath(after));
    expect(written.slice(0, original.length)).toEqual(original);
    const corrections = written.slice(original.length);
    expect(corrections.length).toBe(after.focus!.corrections);
    expect(corrections.length).toBeGreaterThan(0);
    // Corrections are for that program and metric only; the usage lands on the restated day (the
    // line's re-rounded cents may move a cent between its days, which is a correction too).
    for (const c of corrections) {
      expect(c).toMatchObject({ ChargeClass: 'Correction', ChargeCategory: 'Usage', SubAccountId: target!.program_id, SkuId: 'compute_unit_seconds',
        x_CorrectsFinalization: `${MONTH}#1`, BillingPeriodStart: new Date(`${MONTH}-01T00:00:00Z`) });
    }
    const onDay = corrections.filter((c) => (c.ChargePeriodStart as Date).toISOString() === '2025-10-12T00:00:00.000Z');
    expect(onDay.reduce((a, c) => a + Number(c.ConsumedQuantity as string), 0)).toBeCloseTo(100, 6);
    expect(corrections.reduce((a, c) => a + Number(c.ConsumedQuantity as string), 0)).toBeCloseTo(100, 6);
    const rate = target!.period_plan === 'launch' ? 0.106 : 0.222;
    const delta = corrections.reduce((a, c) => a + Number(c.BilledCost as string), 0);
    expect(Math.abs(delta - 100 * rate)).toBeLessThanOrEqual(0.011);
    // Still adds up to the (new) workbook total.
    const [s] = await L.store.query<{ billed: string }>(`SELECT CAST(sum("BilledCost") AS DECIMAL(18,2)) AS billed FROM ${rp(focusPath(after))}`);
    expect(s!.billed).toBe(after.total);
    expect(after.total).not.toBe(before.total);

    // Finalising again accepts the corrections; the next export adds none.
    const fin2 = await run({ finalize: true, now: L.now + 3 * 86_400_000 });
    expect(fin2.focus!.finalized).toMatchObject({ finalizationId: `${MONTH}#2`, rows: corrections.length });
    const later = await run({ now: L.now + 4 * 86_400_000 });
    expect(later.focus!.corrections).toBe(0);
    expect(await rows(focusPath(later))).toEqual(written);
  });
});

// The FOCUS 1.2 export checked against the specification's rules (written out here from the column
// definitions of FOCUS 1.2 and the FinOps Foundation validator's model-1.2 rules, independently of the
// code): every mandatory column and the conditional ones that apply to this provider (region, unit
// pricing, public price list, usage measurement, sub-account, account naming, resource type) with type,
// nullability and allowed values, and the relationships between columns; BilledCost adds up to the
// workbook's total to the cent; and corrections after finalisation.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import ExcelJS from 'exceljs';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { FocusFinalizeError } from '../../src/report/focus.js';
import { runReport, type ReportResult } from '../../src/report/run.js';
import { SERVICE_CATEGORIES } from '../support/focusRules.js';
import { loadMonth, type Loaded } from '../support/month.js';
import { rawSql } from '../../src/store/rawSql.js';

const MONTH = '2025-10';
const BOOK = 'config/prices.toml';

type Kind = 'Decimal' | 'String' | 'DateTime';
// FOCUS 1.2 columns this export provides: type and whether the column allows nulls (Mandatory
// columns first, then the Conditional ones that apply to this service).
// Cost columns are never null: usage with no rate is left out of the file (and never shown as 0).
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
  PricingCategory: { kind: 'String', nulls: true },
  PricingQuantity: { kind: 'Decimal', nulls: true },
  PricingUnit: { kind: 'String', nulls: true },
  ProviderName: { kind: 'String', nulls: false },
  PublisherName: { kind: 'String', nulls: false },
  ServiceCategory: { kind: 'String', nulls: false },
  ServiceName: { kind: 'String', nulls: false },
  ServiceSubcategory: { kind: 'String', nulls: false },
  // Conditional (or recommended) and applicable here
  InvoiceId: { kind: 'String', nulls: true },
  RegionId: { kind: 'String', nulls: true },
  RegionName: { kind: 'String', nulls: true },
  SkuMeter: { kind: 'String', nulls: true },
  SkuPriceDetails: { kind: 'String', nulls: true },
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
const NOT_NULL_ON_USAGE = [
  'PricingQuantity',
  'PricingUnit',
  'PricingCategory',
  'SkuId',
  'SkuMeter',
  'ConsumedQuantity',
  'ConsumedUnit',
  'ResourceId',
  'SubAccountId',
  'RegionId',
];
// Not null on a priced Usage row that is not a correction (null, never 0, when unpriced).
const NOT_NULL_ON_PRICED_USAGE = ['ListUnitPrice', 'ContractedUnitPrice', 'SkuPriceId', 'SkuPriceDetails'];
const COST_COLUMNS = ['BilledCost', 'EffectiveCost', 'ListCost', 'ContractedCost'];
// FOCUS 1.2 ServiceSubcategory values and their one parent ServiceCategory (the parts used here).
const SUBCATEGORY_PARENT: Record<string, string> = {
  Administration: 'Management and Governance',
  Architecture: 'Management and Governance',
  Compliance: 'Management and Governance',
  'Cost Management': 'Management and Governance',
  'Data Governance': 'Management and Governance',
  'Disaster Recovery': 'Management and Governance',
  Observability: 'Management and Governance',
  Support: 'Management and Governance',
  'Other (Management and Governance)': 'Management and Governance',
  Relational: 'Databases',
  'Other (Databases)': 'Databases',
  'Other (Security)': 'Security',
};
const CHARGE_CATEGORIES = ['Adjustment', 'Credit', 'Purchase', 'Tax', 'Usage'];
const CHARGE_FREQUENCIES = ['One-Time', 'Recurring', 'Usage-Based'];
// UnitFormat: base units joined by '-', data sizes as abbreviations, time units capitalised and plural at the end.
const UNIT =
  /^(?:(?:[KMGTPE]i?[bB]|[bB])|[A-Z][A-Za-z]*)(?:-(?:Years|Months|Days|Hours|Minutes|Seconds|[A-Z][A-Za-z]*s))?$/;
const DUCK_TYPE: Record<Kind, RegExp> = {
  Decimal: /^DECIMAL\(\d+,\d+\)$/,
  String: /^VARCHAR$/,
  DateTime: /^TIMESTAMP WITH TIME ZONE$/,
};

const focusPath = (r: ReportResult) => r.files.find((f) => f.path.includes(`focus-${MONTH}.parquet`))!.path;
const rp = (p: string) => `read_parquet('${p}')`;

describe('the FOCUS 1.2 file of a complete month', () => {
  let L: Loaded;
  let r: ReportResult;
  let path: string;
  beforeAll(async () => {
    L = await loadMonth({ month: MONTH });
    r = await runReport({
      store: L.store,
      month: MONTH,
      outDir: join(L.dir, 'reports'),
      formats: ['parquet', 'xlsx', 'focus'],
      priceBookPath: BOOK,
      now: new Date(L.now),
    });
    path = focusPath(r);
  });
  afterAll(async () => {
    await L?.store.close();
  });

  test('has every column with its FOCUS type, FOCUS columns first and extra columns prefixed x_', async () => {
    const cols = await rawSql(L.store).query<{ column_name: string; column_type: string }>(
      `DESCRIBE SELECT * FROM ${rp(path)}`,
    );
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
    const schema = await rawSql(L.store).query<{ name: string; logical_type: string }>(
      `SELECT name, logical_type FROM parquet_schema('${path}')`,
    );
    for (const n of ['BillingPeriodStart', 'BillingPeriodEnd', 'ChargePeriodStart', 'ChargePeriodEnd'])
      expect(schema.find((s) => s.name === n)!.logical_type).toMatch(/isAdjustedToUTC=1/);
  });

  test('nullability, allowed values, date-times and units follow the 1.2 rules', async () => {
    const n = (await rawSql(L.store).query<{ n: bigint }>(`SELECT count(*) AS n FROM ${rp(path)}`))[0]!.n;
    expect(n).toBeGreaterThan(1000n);
    for (const [name, rule] of Object.entries(FOCUS_1_2)) {
      if (rule.nulls) continue;
      const [x] = await rawSql(L.store).query<{ n: bigint }>(
        `SELECT count(*) AS n FROM ${rp(path)} WHERE "${name}" IS NULL`,
      );
      expect(x!.n, `${name} must not be null`).toBe(0n);
    }
    for (const name of NOT_NULL_ON_USAGE) {
      const [x] = await rawSql(L.store).query<{ n: bigint }>(
        `SELECT count(*) AS n FROM ${rp(path)} WHERE "ChargeCategory" = 'Usage' AND "ChargeClass" IS NULL AND "${name}" IS NULL`,
      );
      expect(x!.n, `${name} must not be null on a Usage row`).toBe(0n);
    }
    for (const name of NOT_NULL_ON_PRICED_USAGE) {
      const [x] = await rawSql(L.store).query<{ n: bigint }>(
        `SELECT count(*) AS n FROM ${rp(path)} WHERE "ChargeCategory" = 'Usage' AND "ChargeClass" IS NULL AND NOT "x_Unpriced" AND "${name}" IS NULL`,
      );
      expect(x!.n, `${name} must not be null on a priced Usage row`).toBe(0n);
    }
    for (const v of await (async () =>
      (
        await rawSql(L.store).query<{ v: string | null }>(`SELECT DISTINCT "PricingCategory" AS v FROM ${rp(path)}`)
      ).map((x) => x.v))())
      expect(['Standard', 'Dynamic', 'Committed', 'Other', null]).toContain(v);
    // Relationships between columns (the validator's cross-column rules).
    const [rel] = await rawSql(L.store).query<Record<string, bigint>>(`
      SELECT
        count(*) FILTER (WHERE ("RegionId" IS NULL) <> ("RegionName" IS NULL)) AS region_name_iff_id,
        count(*) FILTER (WHERE "BillingAccountName" = "BillingAccountId") AS account_name_is_id,
        count(*) FILTER (WHERE "ChargeCategory" = 'Usage' AND "ChargeClass" IS NULL AND "ConsumedQuantity" <= 0) AS non_positive_usage,
        count(*) FILTER (WHERE "ChargeClass" IS NULL AND "BilledCost" < 0) AS negative_usage_cost,
        count(*) FILTER (WHERE "x_Unpriced" AND ("BilledCost" IS NOT NULL OR "ListUnitPrice" IS NOT NULL OR "ListCost" IS NOT NULL OR "SkuPriceId" IS NOT NULL)) AS unpriced_with_price,
        count(*) FILTER (WHERE "SkuPriceId" IS NOT NULL AND "SkuId" IS NULL) AS price_without_sku,
        count(*) FILTER (WHERE "SkuPriceDetails" IS NOT NULL AND json_type(CAST("SkuPriceDetails" AS JSON)) <> 'OBJECT') AS details_not_key_value,
        count(*) FILTER (WHERE "SubAccountName" IS NOT NULL AND "SubAccountId" IS NULL) AS sub_name_without_id,
        count(*) FILTER (WHERE "ResourceName" IS NOT NULL AND "ResourceId" IS NULL) AS resource_name_without_id,
        count(*) FILTER (WHERE "x_CoverageStatus" NOT IN ('COMPLETE', 'PARTIAL')) AS bad_status
      FROM ${rp(path)}`);
    expect(rel).toEqual({
      region_name_iff_id: 0n,
      account_name_is_id: 0n,
      non_positive_usage: 0n,
      negative_usage_cost: 0n,
      unpriced_with_price: 0n,
      price_without_sku: 0n,
      details_not_key_value: 0n,
      sub_name_without_id: 0n,
      resource_name_without_id: 0n,
      bad_status: 0n,
    });
    const perKey = await rawSql(L.store).query<{ k: string }>(`
      SELECT 'SkuPriceId ' || "SkuPriceId" AS k FROM ${rp(path)} WHERE "SkuPriceId" IS NOT NULL GROUP BY "SkuPriceId"
        HAVING count(DISTINCT "ListUnitPrice") > 1 OR count(DISTINCT "SkuId") > 1 OR count(DISTINCT "SkuPriceDetails") > 1
      UNION ALL
      SELECT 'RegionId ' || "RegionId" FROM ${rp(path)} WHERE "RegionId" IS NOT NULL GROUP BY "RegionId" HAVING count(DISTINCT "RegionName") > 1
      UNION ALL
      SELECT 'ServiceName ' || "ServiceName" FROM ${rp(path)} GROUP BY "ServiceName" HAVING count(DISTINCT "ServiceSubcategory") > 1 OR count(DISTINCT "ServiceCategory") > 1
      UNION ALL
      SELECT 'SubAccountId ' || "SubAccountId" FROM ${rp(path)} WHERE "SubAccountId" IS NOT NULL GROUP BY "SubAccountId" HAVING count(DISTINCT "SubAccountName") > 1
      UNION ALL
      SELECT 'BillingAccountId ' || "BillingAccountId" FROM ${rp(path)} GROUP BY "BillingAccountId" HAVING count(DISTINCT "BillingAccountName") > 1`);
    expect(perKey).toEqual([]);
    // SkuPriceDetails and ListUnitPrice exist exactly when a SkuPriceId does; SkuMeter names its SkuId alone.
    const [sku] = await rawSql(L.store).query<Record<string, bigint>>(`
      SELECT
        count(*) FILTER (WHERE ("SkuPriceDetails" IS NULL) <> ("SkuPriceId" IS NULL)) AS details_iff_price,
        count(*) FILTER (WHERE ("ListUnitPrice" IS NULL) <> ("SkuPriceId" IS NULL)) AS list_price_iff_price,
        count(*) FILTER (WHERE ("ContractedUnitPrice" IS NULL) <> ("SkuPriceId" IS NULL)) AS contracted_price_iff_price,
        count(*) FILTER (WHERE "SkuMeter" IS NOT NULL AND "SkuId" IS NULL) AS meter_without_sku,
        count(*) FILTER (WHERE "ContractedUnitPrice" > "ListUnitPrice") AS contracted_above_list,
        count(*) FILTER (WHERE "PricingQuantity" < 0 OR "ConsumedQuantity" < 0) AS negative_quantity
      FROM ${rp(path)}`);
    expect(sku).toEqual({
      details_iff_price: 0n,
      list_price_iff_price: 0n,
      contracted_price_iff_price: 0n,
      meter_without_sku: 0n,
      contracted_above_list: 0n,
      negative_quantity: 0n,
    });
    const meters = await rawSql(L.store).query(
      `SELECT "SkuId" FROM ${rp(path)} WHERE "SkuId" IS NOT NULL GROUP BY 1 HAVING count(DISTINCT "SkuMeter") > 1`,
    );
    expect(meters).toEqual([]);
    // BillingAccountName is the organization's name from the API's organization listing.
    const names = await rawSql(L.store).query<{ id: string; name: string; expected: string | null }>(`
      SELECT DISTINCT f."BillingAccountId" AS id, f."BillingAccountName" AS name, o.name AS expected
      FROM ${rp(path)} f LEFT JOIN organizations o ON o.org_id = f."BillingAccountId"`);
    expect(names.filter((x) => x.expected !== null).length).toBeGreaterThan(0);
    for (const x of names) if (x.expected !== null) expect(x.name, x.id).toBe(x.expected);
    expect(new Set(names.map((x) => x.name)).size).toBe(names.length);
    const subs = await rawSql(L.store).query<{ c: string; s: string }>(
      `SELECT DISTINCT "ServiceCategory" AS c, "ServiceSubcategory" AS s FROM ${rp(path)}`,
    );
    for (const x of subs) expect(SUBCATEGORY_PARENT[x.s], `${x.s} under ${x.c}`).toBe(x.c);
    const [regions] = await rawSql(L.store).query<{ n: bigint }>(
      `SELECT count(DISTINCT "RegionId") AS n FROM ${rp(path)}`,
    );
    expect(regions!.n).toBeGreaterThan(1n);
    const distinct = async (c: string) =>
      (await rawSql(L.store).query<{ v: string | null }>(`SELECT DISTINCT "${c}" AS v FROM ${rp(path)}`)).map(
        (x) => x.v,
      );
    for (const v of await distinct('ChargeCategory')) expect(CHARGE_CATEGORIES).toContain(v);
    for (const v of await distinct('ChargeClass')) expect([null, 'Correction']).toContain(v);
    for (const v of await distinct('ChargeFrequency')) expect(CHARGE_FREQUENCIES).toContain(v);
    for (const v of await distinct('ServiceCategory')) expect(SERVICE_CATEGORIES).toContain(v);
    for (const v of await distinct('BillingCurrency')) expect(v).toMatch(/^[A-Z]{3}$/);
    const units = [...new Set([...(await distinct('PricingUnit')), ...(await distinct('ConsumedUnit'))])].sort();
    for (const u of units) expect(u).toMatch(UNIT);
    expect(units).toEqual(expect.arrayContaining(['GB', 'GB-Months', 'CU-Hours', 'Hours', 'Branch-Months']));

    const [bad] = await rawSql(L.store).query<Record<string, bigint>>(`
      SELECT
        count(*) FILTER (WHERE "ChargePeriodStart" >= "ChargePeriodEnd") AS empty_period,
        count(*) FILTER (WHERE "ChargePeriodStart" < "BillingPeriodStart" OR "ChargePeriodEnd" > "BillingPeriodEnd") AS outside_billing,
        count(*) FILTER (WHERE "BillingPeriodStart" <> TIMESTAMPTZ '${MONTH}-01 00:00:00+00' OR "BillingPeriodEnd" <> TIMESTAMPTZ '2025-11-01 00:00:00+00') AS wrong_billing,
        count(*) FILTER (WHERE epoch_ms("ChargePeriodStart") % 1000 <> 0 OR epoch_ms("ChargePeriodEnd") % 1000 <> 0) AS fractional_seconds,
        count(*) FILTER (WHERE "ListCost" IS DISTINCT FROM "ListUnitPrice" * "PricingQuantity") AS list_not_product,
        count(*) FILTER (WHERE "ContractedCost" IS DISTINCT FROM "ContractedUnitPrice" * "PricingQuantity") AS contracted_not_product,
        count(*) FILTER (WHERE "EffectiveCost" IS DISTINCT FROM "BilledCost") AS effective_differs,
        count(*) FILTER (WHERE "ListUnitPrice" < 0 OR "ContractedUnitPrice" < 0) AS negative_price,
        -- GB is 10^9 bytes (quantities carry 6 decimals, so within half a micro-GB of the raw bytes).
        count(*) FILTER (WHERE "PricingUnit" IN ('GB', 'GB-Months') AND abs("ConsumedQuantity" * 1000000000 - "x_ConsumedQuantityRaw") > 500
                           AND "x_Metric" NOT LIKE '%bytes_hour') AS gb_not_1e9,
        -- Charge periods are UTC days; a gauge (priced on its peak) spans its line instead.
        count(*) FILTER (WHERE "x_Metric" NOT IN ('synthetic_storage_size_bytes', 'logical_size_bytes') AND (
          strftime("ChargePeriodStart", '%Y-%m-%dT%H:%M:%SZ') NOT SIMILAR TO '\\d{4}-\\d{2}-\\d{2}T00:00:00Z'
          OR "ChargePeriodEnd" <> "ChargePeriodStart" + INTERVAL 1 DAY)) AS not_utc_day
      FROM ${rp(path)}`);
    expect(bad).toEqual({
      empty_period: 0n,
      outside_billing: 0n,
      wrong_billing: 0n,
      fractional_seconds: 0n,
      list_not_product: 0n,
      contracted_not_product: 0n,
      effective_differs: 0n,
      negative_price: 0n,
      gb_not_1e9: 0n,
      not_utc_day: 0n,
    });
  });

  test('sum(BilledCost) equals the workbook total to the cent, per program too: no double counting', async () => {
    const [s] = await rawSql(L.store).query<{ billed: string }>(
      `SELECT CAST(sum("BilledCost") AS DECIMAL(18,2)) AS billed FROM ${rp(path)}`,
    );
    expect(s!.billed).toBe(r.total);
    const wb = new ExcelJS.Workbook();
    await wb.xlsx.readFile(r.files.find((f) => f.path.endsWith('.xlsx'))!.path);
    let workbookTotal: number | undefined;
    wb.getWorksheet('Summary')!.eachRow((row) => {
      if (row.getCell(1).value === 'Total' && workbookTotal === undefined)
        workbookTotal = row.getCell(5).value as number;
    });
    expect(Math.round(workbookTotal! * 100)).toBe(Number(s!.billed.replace('.', '')));

    const dir = r.dir;
    const diff = await rawSql(L.store).query(`
      WITH f AS (SELECT "SubAccountId" AS program_id, sum(coalesce("BilledCost", 0)) AS c FROM ${rp(path)} GROUP BY 1),
           p AS (SELECT program_id, sum(cost) AS c FROM ${rp(join(dir, 'program_spend.parquet'))} WHERE priced GROUP BY 1)
      SELECT coalesce(f.program_id, p.program_id) AS program_id, f.c AS focus, p.c AS workbook
      FROM f FULL OUTER JOIN p ON f.program_id = p.program_id WHERE f.c IS DISTINCT FROM p.c`);
    expect(diff).toEqual([]);
    // All rows are framework_spend (with its unattributed and no-framework lines); framework rows are its framework lines.
    const [fw] = await rawSql(L.store).query<{ a: string; b: string; c: string; d: string }>(`
      SELECT (SELECT CAST(sum("BilledCost") AS DECIMAL(18,2)) FROM ${rp(path)}) AS a,
             (SELECT CAST(sum(coalesce(cost, 0)) AS DECIMAL(18,2)) FROM ${rp(join(dir, 'framework_spend.parquet'))}) AS b,
             (SELECT CAST(sum("BilledCost") AS DECIMAL(18,2)) FROM ${rp(path)} WHERE "x_LineType" = 'framework') AS c,
             (SELECT CAST(sum(coalesce(cost, 0)) AS DECIMAL(18,2)) FROM ${rp(join(dir, 'framework_spend.parquet'))} WHERE line_type = 'framework') AS d`);
    expect(fw!.a).toBe(fw!.b);
    expect(fw!.c).toBe(fw!.d);
  });

  test('unpriced usage is left out (never a null or 0 cost): no row is unpriced, the manifest counts it', async () => {
    expect(r.unpricedLines).toBeGreaterThan(0);
    const [u] = await rawSql(L.store).query<{ n: bigint; nulls: bigint }>(`
      SELECT count(*) FILTER (WHERE "x_Unpriced" OR "ChargeDescription" LIKE '%UNPRICED%') AS n,
             count(*) FILTER (WHERE ${COST_COLUMNS.map((c) => `"${c}" IS NULL`).join(' OR ')}) AS nulls
      FROM ${rp(path)}`);
    expect(u).toEqual({ n: 0n, nulls: 0n });
    expect(r.focus!.leftOut.lines).toBe(r.unpricedLines);
    const manifest = JSON.parse(readFileSync(join(r.dir, 'manifest.json'), 'utf8'));
    expect(manifest.files.map((f: { name: string }) => f.name)).toContain(`focus-${MONTH}.parquet`);
    expect(manifest.focus).toMatchObject({
      version: '1.2',
      rows: r.focus!.rows,
      corrections: 0,
      billed_total: r.total,
    });
  });
});

describe('corrections after finalisation', () => {
  let L: Loaded;
  const out = () => join(L.dir, 'reports');
  const run = (o: { finalize?: boolean; now?: number } = {}) =>
    runReport({
      store: L.store,
      month: MONTH,
      outDir: out(),
      formats: ['focus'],
      priceBookPath: BOOK,
      now: new Date(o.now ?? L.now),
      ...(o.finalize ? { finalize: true } : {}),
    });
  const rows = (p: string) => rawSql(L.store).query(`SELECT * FROM ${rp(p)}`);
  beforeAll(async () => {
    L = await loadMonth({ month: MONTH });
  });
  afterAll(async () => {
    await L?.store.close();
  });

  test('a month is finalised only when complete and over', async () => {
    await expect(
      runReport({
        store: L.store,
        month: MONTH,
        outDir: out(),
        formats: ['focus'],
        priceBookPath: BOOK,
        now: new Date('2025-10-20T00:00:00Z'),
        finalize: true,
      }),
    ).rejects.toBeInstanceOf(FocusFinalizeError);
    expect(await rawSql(L.store).query('SELECT * FROM report_finalizations')).toEqual([]);
  });

  test('finalised rows are kept unchanged and differences become Correction rows', async () => {
    const before = await run();
    const original = await rows(focusPath(before));
    const fin = await run({ finalize: true });
    expect(fin.focus!.finalized).toMatchObject({
      finalizationId: `${MONTH}#1`,
      rows: original.length,
      billedTotal: before.total,
    });
    expect(fin.files.find((f) => f.path.includes('focus-'))!.sha256).toBe(
      before.files.find((f) => f.path.includes('focus-'))!.sha256,
    );

    // Nothing changed: the same file again, no corrections.
    const same = await run({ now: L.now + 86_400_000 });
    expect(same.focus!.corrections).toBe(0);
    expect(same.files.find((f) => f.path.includes('focus-'))!.sha256).toBe(
      before.files.find((f) => f.path.includes('focus-'))!.sha256,
    );

    // A restated bucket: one program's compute on one day grows by 100 CU-hours on a priced plan.
    const [target] = await rawSql(L.store).query<{ program_id: string; timeframe_start: Date; period_plan: string }>(`
      SELECT program_id, timeframe_start, period_plan FROM usage_program
      WHERE granularity = 'daily' AND metric = 'compute_unit_seconds' AND period_plan IN ('launch', 'scale')
        AND timeframe_start = TIMESTAMPTZ '2025-10-12 00:00:00+00'
      ORDER BY program_id LIMIT 1`);
    await rawSql(L.store).run(
      `UPDATE usage_program_buckets SET compute_unit_seconds = compute_unit_seconds + 360000 WHERE granularity = 'daily'
      AND compute_unit_seconds IS NOT NULL AND program_id = $p AND timeframe_start = $t`,
      { p: target!.program_id, t: target!.timeframe_start },
    );

    const after = await run({ now: L.now + 2 * 86_400_000 });
    const written = await rows(focusPath(after));
    expect(written.slice(0, original.length)).toEqual(original);
    const corrections = written.slice(original.length);
    expect(corrections.length).toBe(after.focus!.corrections);
    expect(corrections.length).toBeGreaterThan(0);
    // Corrections are for that program and metric only; the usage lands on the restated day (the
    // line's re-rounded cents may move a cent between its days, which is a correction too).
    for (const c of corrections) {
      expect(c).toMatchObject({
        ChargeClass: 'Correction',
        ChargeCategory: 'Usage',
        SubAccountId: target!.program_id,
        SkuId: 'compute_unit_seconds',
        x_CorrectsFinalization: `${MONTH}#1`,
        BillingPeriodStart: new Date(`${MONTH}-01T00:00:00Z`),
      });
    }
    const onDay = corrections.filter((c) => (c.ChargePeriodStart as Date).toISOString() === '2025-10-12T00:00:00.000Z');
    expect(onDay.reduce((a, c) => a + Number(c.ConsumedQuantity as string), 0)).toBeCloseTo(100, 6);
    expect(corrections.reduce((a, c) => a + Number(c.ConsumedQuantity as string), 0)).toBeCloseTo(100, 6);
    const rate = target!.period_plan === 'launch' ? 0.106 : 0.222;
    const delta = corrections.reduce((a, c) => a + Number(c.BilledCost as string), 0);
    expect(Math.abs(delta - 100 * rate)).toBeLessThanOrEqual(0.011);
    // The finalised total plus the corrections: the workbook keeps the finalised total and lists the
    // same change in its corrections section.
    const [s] = await rawSql(L.store).query<{ billed: string }>(
      `SELECT CAST(sum("BilledCost") AS DECIMAL(18,2)) AS billed FROM ${rp(focusPath(after))}`,
    );
    expect(after.total).toBe(before.total);
    expect(Number(s!.billed)).toBeCloseTo(Number(before.total) + Number(after.corrections!.amount), 2);
    expect(s!.billed).not.toBe(before.total);

    // Finalising again accepts the corrections; the next export adds none.
    const fin2 = await run({ finalize: true, now: L.now + 3 * 86_400_000 });
    expect(fin2.focus!.finalized).toMatchObject({ finalizationId: `${MONTH}#2`, rows: corrections.length });
    const later = await run({ now: L.now + 4 * 86_400_000 });
    expect(later.focus!.corrections).toBe(0);
    expect(await rows(focusPath(later))).toEqual(written);
  });
});

// The FOCUS 1.2 conformance rules that apply to this provider, written out here from the FinOps
// Foundation validator's model-1.2 rules (CostAndUsage dataset) and the FOCUS 1.2 column definitions,
// independently of the code that writes the file. Each rule is a query over the file counting the rows
// (or, for a presence rule, the columns) that break it, under its rule id.
//
// Applicability criteria of this provider: REGION_SUPPORTED, PUBLIC_PRICE_LIST_SUPPORTED,
// UNIT_PRICING_SUPPORTED, NEGOTIATED_PRICING_SUPPORTED, USAGE_MEASUREMENT_SUPPORTED,
// SUB_ACCOUNT_SUPPORTED, ACCOUNT_NAMING_SUPPORTED, RESOURCE_TYPE_ASSIGNMENT_SUPPORTED. Not applicable:
// availability zones, capacity reservations, commitment discounts, tags, a pricing currency other than
// the billing currency, several account types (so BillingAccountType and SubAccountType, conditional in
// FOCUS 1.2 on more than one type, are absent). Rules the validator runs as "dynamic" (no query) are
// not listed, except the cost relations FOCUS states, which are checked and marked (dynamic). Where the
// model's query contradicts the specification's text, the specification's text is checked and the
// rule says so.
import type { Store } from '../../src/store/store.js';
import { rawSql } from '../../src/store/rawSql.js';

export interface RuleResult {
  id: string;
  rule: string;
  violations: number;
}

interface Rule {
  id: string;
  rule: string;
  /** A condition true on a breaking row (over the file as `f`), or 'column' for a presence rule. */
  breaks: string;
}

const q = (c: string) => `"${c}"`;
const USAGE_OR_PURCHASE_NOT_CORRECTION = `("ChargeCategory" IN ('Usage', 'Purchase') AND "ChargeClass" IS DISTINCT FROM 'Correction')`;
const UNIT = `'^(?:(?:[KMGTPE]i?[bB]|[bB])|[A-Z][A-Za-z]*)(?:-(?:Years|Months|Days|Hours|Minutes|Seconds|[A-Z][A-Za-z]*s))?$'`;
export const SERVICE_CATEGORIES = [
  'AI and Machine Learning',
  'Analytics',
  'Business Applications',
  'Compute',
  'Databases',
  'Developer Tools',
  'Multicloud',
  'Identity',
  'Integration',
  'Internet of Things',
  'Management and Governance',
  'Media',
  'Migration',
  'Mobile',
  'Networking',
  'Security',
  'Storage',
  'Web',
  'Other',
];
/** ServiceSubcategory values of FOCUS 1.2 and their parent ServiceCategory. */
const SUBCATEGORIES: Record<string, string[]> = {
  'AI and Machine Learning': [
    'AI Platforms',
    'Bots',
    'Generative AI',
    'Machine Learning',
    'Natural Language Processing',
    'Other (AI and Machine Learning)',
  ],
  Analytics: [
    'Analytics Platforms',
    'Business Intelligence',
    'Data Processing',
    'Search',
    'Streaming Analytics',
    'Other (Analytics)',
  ],
  'Business Applications': ['Productivity and Collaboration', 'Other (Business Applications)'],
  Compute: [
    'Containers',
    'End User Computing',
    'Quantum Compute',
    'Serverless Compute',
    'Virtual Machines',
    'Other (Compute)',
  ],
  Databases: [
    'Caching',
    'Data Warehouses',
    'Ledger Databases',
    'NoSQL Databases',
    'Relational Databases',
    'Time Series Databases',
    'Other (Databases)',
  ],
  'Developer Tools': [
    'Developer Platforms',
    'Continuous Integration and Deployment',
    'Development Environments',
    'Source Code Management',
    'Quality Assurance',
    'Other (Developer Tools)',
  ],
  Identity: ['Identity and Access Management', 'Other (Identity)'],
  Integration: ['API Management', 'Messaging', 'Workflow Orchestration', 'Other (Integration)'],
  'Internet of Things': ['IoT Analytics', 'IoT Platforms', 'Other (Internet of Things)'],
  'Management and Governance': [
    'Architecture',
    'Compliance',
    'Cost Management',
    'Data Governance',
    'Disaster Recovery',
    'Endpoint Management',
    'Observability',
    'Support',
    'Other (Management and Governance)',
  ],
  Media: ['Content Creation', 'Gaming', 'Media Streaming', 'Mixed Reality', 'Other (Media)'],
  Migration: ['Data Migration', 'Resource Migration', 'Other (Migration)'],
  Mobile: ['Other (Mobile)'],
  Multicloud: ['Multicloud Integration', 'Other (Multicloud)'],
  Networking: [
    'Application Networking',
    'Content Delivery',
    'Network Connectivity',
    'Network Infrastructure',
    'Network Routing',
    'Network Security',
    'Other (Networking)',
  ],
  Security: ['Secret Management', 'Security Posture Management', 'Threat Detection and Response', 'Other (Security)'],
  Storage: [
    'Backup Storage',
    'Block Storage',
    'File Storage',
    'Object Storage',
    'Storage Platforms',
    'Other (Storage)',
  ],
  Web: ['Application Platforms', 'Other (Web)'],
  Other: ['Other (Other)'],
};
const list = (xs: readonly string[]) => xs.map((x) => `'${x.replaceAll("'", "''")}'`).join(', ');

/** The rule builders: the model's check functions. */
const present = (id: string, c: string): Rule => ({ id, rule: `${c} is present (ColumnPresent)`, breaks: 'column' });
const notNull = (id: string, c: string, when = 'true', why = ''): Rule => ({
  id,
  rule: `${c} is not null${why}`,
  breaks: `(${when}) AND ${q(c)} IS NULL`,
});
const isNull = (id: string, c: string, when: string, why: string): Rule => ({
  id,
  rule: `${c} is null ${why}`,
  breaks: `(${when}) AND ${q(c)} IS NOT NULL`,
});
const typeDecimal = (id: string, c: string): Rule => ({
  id,
  rule: `${c} is of type Decimal (TypeDecimal)`,
  breaks: `${q(c)} IS NOT NULL AND typeof(${q(c)}) NOT LIKE 'DECIMAL(%'`,
});
const typeString = (id: string, c: string): Rule => ({
  id,
  rule: `${c} is of type String (TypeString)`,
  breaks: `${q(c)} IS NOT NULL AND typeof(${q(c)}) <> 'VARCHAR'`,
});
const typeDateTime = (id: string, c: string): Rule => ({
  id,
  rule: `${c} is of type Date/Time (TypeDateTime)`,
  breaks: `${q(c)} IS NOT NULL AND typeof(${q(c)}) <> 'TIMESTAMP WITH TIME ZONE'`,
});
const formatNumeric = (id: string, c: string): Rule => ({
  id,
  rule: `${c} is numeric (FormatNumeric)`,
  breaks: `${q(c)} IS NOT NULL AND NOT regexp_full_match(trim(CAST(${q(c)} AS VARCHAR)), '[+-]?([0-9]*[.])?[0-9]+([eE][+-]?[0-9]+)?')`,
});
const formatString = (id: string, c: string): Rule => ({
  id,
  rule: `${c} holds ASCII text (FormatString)`,
  breaks: `${q(c)} IS NOT NULL AND NOT regexp_full_match(${q(c)}, '[\\x00-\\x7F]*')`,
});
const formatDateTime = (id: string, c: string): Rule => ({
  id,
  rule: `${c} is a UTC instant of whole seconds, YYYY-MM-DDTHH:MM:SSZ (FormatDateTime)`,
  breaks: `${q(c)} IS NOT NULL AND (epoch_ms(${q(c)}) % 1000 <> 0 OR NOT regexp_full_match(strftime(${q(c)}, '%Y-%m-%dT%H:%M:%SZ'), '[0-9]{4}-[0-1][0-9]-[0-3][0-9]T[0-2][0-9]:[0-5][0-9]:[0-5][0-9]Z'))`,
});
const formatUnit = (id: string, c: string): Rule => ({
  id,
  rule: `${c} follows UnitFormat (FormatUnit)`,
  breaks: `${q(c)} IS NOT NULL AND NOT regexp_full_match(${q(c)}, ${UNIT})`,
});
const values = (id: string, c: string, vs: readonly string[]): Rule => ({
  id,
  rule: `${c} is one of the allowed values`,
  breaks: `${q(c)} IS NOT NULL AND ${q(c)} NOT IN (${list(vs)})`,
});
const relation = (id: string, rule: string, breaks: string): Rule => ({ id, rule, breaks });

const stringColumn = (c: string, type: string, format: string | null): Rule[] => [
  typeString(`${c}-C-${type}-M`, c),
  ...(format ? [formatString(`${c}-C-${format}-M`, c)] : []),
];
const datetimeColumn = (c: string): Rule[] => [
  typeDateTime(`${c}-C-001-M`, c),
  formatDateTime(`${c}-C-002-M`, c),
  notNull(`${c}-C-003-M`, c),
];

export const FOCUS_RULES: Rule[] = [
  // Presence (CostAndUsage-D-*) of every column this provider emits or must emit.
  ...(
    [
      ['D-004-C', 'ListUnitPrice'],
      ['D-005-M', 'BillingAccountName'],
      ['D-006-M', 'BilledCost'],
      ['D-008-M', 'ChargeCategory'],
      ['D-009-M', 'BillingPeriodStart'],
      ['D-010-M', 'BillingPeriodEnd'],
      ['D-011-C', 'ConsumedQuantity'],
      ['D-019-C', 'SubAccountId'],
      ['D-021-M', 'PublisherName'],
      ['D-022-C', 'PricingCategory'],
      ['D-023-M', 'InvoiceIssuerName'],
      ['D-024-M', 'BillingAccountId'],
      ['D-025-M', 'ChargeDescription'],
      ['D-026-M', 'ChargeClass'],
      ['D-027-O', 'ChargeFrequency'],
      ['D-028-M', 'ChargePeriodEnd'],
      ['D-029-C', 'SubAccountName'],
      ['D-030-M', 'ContractedCost'],
      ['D-031-M', 'EffectiveCost'],
      ['D-032-M', 'ListCost'],
      ['D-033-O', 'InvoiceId'],
      ['D-034-C', 'ContractedUnitPrice'],
      ['D-035-M', 'BillingCurrency'],
      ['D-036-M', 'PricingQuantity'],
      ['D-037-M', 'ChargePeriodStart'],
      ['D-038-M', 'ProviderName'],
      ['D-039-C', 'ResourceType'],
      ['D-040-M', 'ServiceCategory'],
      ['D-041-M', 'ServiceName'],
      ['D-042-O', 'ServiceSubcategory'],
      ['D-043-C', 'ResourceId'],
      ['D-044-C', 'ResourceName'],
      ['D-055-C', 'SkuPriceId'],
      ['D-056-C', 'SkuMeter'],
      ['D-057-C', 'SkuId'],
      ['D-058-C', 'SkuPriceDetails'],
      ['D-059-C', 'RegionName'],
      ['D-060-C', 'RegionId'],
      ['D-063-C', 'ConsumedUnit'],
      ['D-065-M', 'PricingUnit'],
    ] as const
  ).map(([d, c]) => present(`CostAndUsage-${d}`, c)),

  notNull('BilledCost-C-001-M', 'BilledCost'),
  typeDecimal('BilledCost-C-002-M', 'BilledCost'),
  formatNumeric('BilledCost-C-003-M', 'BilledCost'),
  relation(
    'BilledCost-C-004-C',
    'BilledCost is 0 when ProviderName differs from InvoiceIssuerName',
    `"ProviderName" <> "InvoiceIssuerName" AND "BilledCost" <> 0`,
  ),

  notNull('BillingAccountId-C-001-M', 'BillingAccountId'),
  ...stringColumn('BillingAccountId', '002', '003'),
  ...stringColumn('BillingAccountName', '001', '002'),
  notNull('BillingAccountName-C-003-C', 'BillingAccountName', 'true', ' (ACCOUNT_NAMING_SUPPORTED)'),

  typeString('BillingCurrency-C-001-M', 'BillingCurrency'),
  formatString('BillingCurrency-C-002-M', 'BillingCurrency'),
  relation(
    'BillingCurrency-C-003-M',
    'BillingCurrency is an ISO 4217 code (FormatCurrency)',
    `NOT regexp_full_match(trim("BillingCurrency"), '[A-Z]{3}')`,
  ),
  notNull('BillingCurrency-C-004-M', 'BillingCurrency'),
  relation(
    'BillingCurrency-C-006-M',
    'BillingCurrency is a national currency (CheckNationalCurrency)',
    `"BillingCurrency" NOT IN ('USD', 'EUR', 'GBP', 'JPY', 'CHF', 'CAD', 'AUD')`,
  ),

  ...datetimeColumn('BillingPeriodEnd'),
  ...datetimeColumn('BillingPeriodStart'),
  ...datetimeColumn('ChargePeriodEnd'),
  ...datetimeColumn('ChargePeriodStart'),

  typeString('ChargeCategory-C-001-M', 'ChargeCategory'),
  notNull('ChargeCategory-C-002-M', 'ChargeCategory'),
  values('ChargeCategory-C-003-M', 'ChargeCategory', ['Usage', 'Purchase', 'Tax', 'Credit', 'Adjustment']),

  typeString('ChargeClass-C-001-M', 'ChargeClass'),
  values('ChargeClass-C-005-C', 'ChargeClass', ['Correction']),

  ...stringColumn('ChargeDescription', '001', '002'),
  notNull('ChargeDescription-C-003-O', 'ChargeDescription'),

  typeString('ChargeFrequency-C-001-M', 'ChargeFrequency'),
  notNull('ChargeFrequency-C-002-M', 'ChargeFrequency'),
  values('ChargeFrequency-C-003-M', 'ChargeFrequency', ['One-Time', 'Recurring', 'Usage-Based']),
  relation(
    'ChargeFrequency-C-004-C',
    'ChargeFrequency is not Usage-Based when ChargeCategory is Purchase',
    `"ChargeCategory" = 'Purchase' AND "ChargeFrequency" = 'Usage-Based'`,
  ),

  typeDecimal('ConsumedQuantity-C-001-M', 'ConsumedQuantity'),
  formatNumeric('ConsumedQuantity-C-002-M', 'ConsumedQuantity'),
  isNull(
    'ConsumedQuantity-C-004-C',
    'ConsumedQuantity',
    `"ChargeCategory" <> 'Usage'`,
    'when ChargeCategory is not Usage',
  ),
  notNull(
    'ConsumedQuantity-C-006-C',
    'ConsumedQuantity',
    `"ChargeCategory" = 'Usage' AND "ChargeClass" IS DISTINCT FROM 'Correction'`,
    " on Usage that is not a Correction (the specification's text)",
  ),

  ...stringColumn('ConsumedUnit', '001', '002'),
  formatUnit('ConsumedUnit-C-003-O', 'ConsumedUnit'),
  isNull('ConsumedUnit-C-004-C', 'ConsumedUnit', `"ConsumedQuantity" IS NULL`, 'when ConsumedQuantity is null'),
  notNull(
    'ConsumedUnit-C-005-C',
    'ConsumedUnit',
    `"ConsumedQuantity" IS NOT NULL`,
    ' when ConsumedQuantity is not null',
  ),

  typeDecimal('ContractedCost-C-001-M', 'ContractedCost'),
  formatNumeric('ContractedCost-C-002-M', 'ContractedCost'),
  notNull('ContractedCost-C-003-M', 'ContractedCost'),
  notNull('ContractedCost-C-004-M', 'ContractedCost'),
  relation(
    'ContractedCost-C-009-C',
    'ContractedCost = ContractedUnitPrice x PricingQuantity (not a Correction)',
    `"ContractedUnitPrice" IS NOT NULL AND "PricingQuantity" IS NOT NULL AND "ChargeClass" IS DISTINCT FROM 'Correction' AND "ContractedCost" <> "ContractedUnitPrice" * "PricingQuantity"`,
  ),

  typeDecimal('ContractedUnitPrice-C-002-M', 'ContractedUnitPrice'),
  formatNumeric('ContractedUnitPrice-C-003-M', 'ContractedUnitPrice'),
  isNull(
    'ContractedUnitPrice-C-005-C',
    'ContractedUnitPrice',
    `"ChargeCategory" = 'Tax'`,
    'when ChargeCategory is Tax',
  ),
  notNull(
    'ContractedUnitPrice-C-006-C',
    'ContractedUnitPrice',
    USAGE_OR_PURCHASE_NOT_CORRECTION,
    ' on Usage or Purchase that is not a Correction',
  ),
  relation('ContractedUnitPrice-C-009-C', 'ContractedUnitPrice >= 0', `"ContractedUnitPrice" < 0`),
  relation(
    'ContractedUnitPrice-C-011-C',
    'ContractedUnitPrice x PricingQuantity = ContractedCost (not a Correction)',
    `"ContractedUnitPrice" IS NOT NULL AND "PricingQuantity" IS NOT NULL AND "ChargeClass" IS DISTINCT FROM 'Correction' AND "ContractedUnitPrice" * "PricingQuantity" <> "ContractedCost"`,
  ),

  typeDecimal('EffectiveCost-C-001-M', 'EffectiveCost'),
  formatNumeric('EffectiveCost-C-002-M', 'EffectiveCost'),
  notNull('EffectiveCost-C-003-M', 'EffectiveCost'),
  // The model's query checks ConsumedQuantity here (as written in it); run as written.
  notNull(
    'EffectiveCost-C-004-M',
    'ConsumedQuantity',
    `"ChargeCategory" = 'Usage'`,
    ' (as the model writes EffectiveCost-C-004-M, on Usage)',
  ),
  relation(
    'EffectiveCost-C-005-C',
    'EffectiveCost is 0 when ChargeCategory is Purchase',
    `"ChargeCategory" = 'Purchase' AND "EffectiveCost" <> 0`,
  ),
  relation(
    'EffectiveCost (dynamic)',
    'EffectiveCost = BilledCost per row and per ChargeClass: nothing is amortized (no commitment discount or prepayment)',
    `"EffectiveCost" <> "BilledCost"`,
  ),

  ...stringColumn('InvoiceId', '001', '002'),
  ...stringColumn('InvoiceIssuerName', '001', '002'),
  notNull('InvoiceIssuerName-C-003-M', 'InvoiceIssuerName'),

  typeDecimal('ListCost-C-001-M', 'ListCost'),
  formatNumeric('ListCost-C-002-M', 'ListCost'),
  notNull('ListCost-C-003-M', 'ListCost'),
  notNull('ListCost-C-004-M', 'ListCost'),
  relation(
    'ListCost-C-009-C',
    'ListCost = ListUnitPrice x PricingQuantity (not a Correction)',
    `"ListUnitPrice" IS NOT NULL AND "PricingQuantity" IS NOT NULL AND "ChargeClass" IS DISTINCT FROM 'Correction' AND "ListCost" <> "ListUnitPrice" * "PricingQuantity"`,
  ),

  typeDecimal('ListUnitPrice-C-001-M', 'ListUnitPrice'),
  formatNumeric('ListUnitPrice-C-002-M', 'ListUnitPrice'),
  isNull('ListUnitPrice-C-004-C', 'ListUnitPrice', `"ChargeCategory" = 'Tax'`, 'when ChargeCategory is Tax'),
  notNull(
    'ListUnitPrice-C-005-C',
    'ListUnitPrice',
    USAGE_OR_PURCHASE_NOT_CORRECTION,
    ' on Usage or Purchase that is not a Correction',
  ),
  relation('ListUnitPrice-C-008-M', 'ListUnitPrice >= 0', `"ListUnitPrice" < 0`),
  relation(
    'ListUnitPrice-C-010-C',
    'ListUnitPrice x PricingQuantity = ListCost (not a Correction)',
    `"ListUnitPrice" IS NOT NULL AND "ChargeClass" IS DISTINCT FROM 'Correction' AND "ListUnitPrice" * "PricingQuantity" <> "ListCost"`,
  ),

  typeString('PricingCategory-C-001-M', 'PricingCategory'),
  isNull('PricingCategory-C-003-C', 'PricingCategory', `"ChargeCategory" = 'Tax'`, 'when ChargeCategory is Tax'),
  notNull(
    'PricingCategory-C-004-C',
    'PricingCategory',
    USAGE_OR_PURCHASE_NOT_CORRECTION,
    ' on Usage or Purchase that is not a Correction',
  ),
  values('PricingCategory-C-007-M', 'PricingCategory', ['Standard', 'Committed', 'Dynamic', 'Other']),

  typeDecimal('PricingQuantity-C-001-M', 'PricingQuantity'),
  formatNumeric('PricingQuantity-C-002-M', 'PricingQuantity'),
  isNull('PricingQuantity-C-004-C', 'PricingQuantity', `"ChargeCategory" = 'Tax'`, 'when ChargeCategory is Tax'),
  notNull(
    'PricingQuantity-C-005-C',
    'PricingQuantity',
    USAGE_OR_PURCHASE_NOT_CORRECTION,
    ' on Usage or Purchase that is not a Correction',
  ),

  ...stringColumn('PricingUnit', '001', '002'),
  formatUnit('PricingUnit-C-003-O', 'PricingUnit'),
  isNull('PricingUnit-C-005-C', 'PricingUnit', `"PricingQuantity" IS NULL`, 'when PricingQuantity is null'),
  notNull('PricingUnit-C-006-C', 'PricingUnit', `"PricingQuantity" IS NOT NULL`, ' when PricingQuantity is not null'),

  ...stringColumn('ProviderName', '001', '002'),
  notNull('ProviderName-C-003-M', 'ProviderName'),
  ...stringColumn('PublisherName', '001', '002'),
  notNull('PublisherName-C-003-M', 'PublisherName'),
  ...stringColumn('RegionId', '001', '002'),
  ...stringColumn('RegionName', '001', '002'),
  relation(
    'RegionName (RegionId)',
    'RegionName is null exactly when RegionId is null',
    `("RegionId" IS NULL) <> ("RegionName" IS NULL)`,
  ),
  ...stringColumn('ResourceId', '001', '002'),
  ...stringColumn('ResourceName', '001', '002'),
  ...stringColumn('ResourceType', '001', '002'),
  isNull('ResourceType-C-004-C', 'ResourceType', `"ResourceId" IS NULL`, 'when ResourceId is null'),
  notNull('ResourceType-C-005-C', 'ResourceType', `"ResourceId" IS NOT NULL`, ' when ResourceId is not null'),

  typeString('ServiceCategory-C-001-M', 'ServiceCategory'),
  notNull('ServiceCategory-C-002-M', 'ServiceCategory'),
  values('ServiceCategory-C-003-M', 'ServiceCategory', SERVICE_CATEGORIES),
  ...stringColumn('ServiceName', '001', '002'),
  notNull('ServiceName-C-003-M', 'ServiceName'),
  relation(
    'ServiceName-C-005-C',
    'one ServiceCategory per ServiceName (CheckDistinctCount)',
    `"ServiceName" IN (SELECT "ServiceName" FROM f GROUP BY 1 HAVING count(DISTINCT "ServiceCategory") > 1)`,
  ),
  relation(
    'ServiceName-C-008-C',
    'one ServiceSubcategory per ServiceName (CheckDistinctCount)',
    `"ServiceName" IN (SELECT "ServiceName" FROM f GROUP BY 1 HAVING count(DISTINCT "ServiceSubcategory") > 1)`,
  ),
  typeString('ServiceSubcategory-C-001-M', 'ServiceSubcategory'),
  notNull('ServiceSubcategory-C-002-M', 'ServiceSubcategory'),
  values('ServiceSubcategory-C-003-M', 'ServiceSubcategory', Object.values(SUBCATEGORIES).flat()),
  relation(
    'ServiceSubcategory-C-004-M',
    "ServiceSubcategory is one of its ServiceCategory's",
    `NOT (${Object.entries(SUBCATEGORIES)
      .map(([c, s]) => `("ServiceCategory" = '${c}' AND "ServiceSubcategory" IN (${list(s)}))`)
      .join(' OR ')})`,
  ),

  ...stringColumn('SkuId', '001', '002'),
  isNull('SkuId-C-004-C', 'SkuId', `"ChargeCategory" = 'Tax'`, 'when ChargeCategory is Tax'),
  notNull('SkuId-C-005-C', 'SkuId', USAGE_OR_PURCHASE_NOT_CORRECTION, ' on Usage or Purchase that is not a Correction'),
  ...stringColumn('SkuMeter', '001', '002'),
  isNull('SkuMeter-C-004-C', 'SkuMeter', `"SkuId" IS NULL`, 'when SkuId is null'),
  notNull('SkuMeter-C-005-C', 'SkuMeter', `"SkuId" IS NOT NULL`, ' when SkuId is not null'),
  relation(
    'SkuPriceDetails-C-001-M',
    'SkuPriceDetails is a JSON object of key-value pairs (FormatKeyValue)',
    `"SkuPriceDetails" IS NOT NULL AND (json_valid("SkuPriceDetails") IS NOT TRUE OR json_type(CAST("SkuPriceDetails" AS JSON)) <> 'OBJECT')`,
  ),
  isNull('SkuPriceDetails-C-004-C', 'SkuPriceDetails', `"SkuPriceId" IS NULL`, 'when SkuPriceId is null'),
  // The model writes C-005-C as "null when SkuPriceId is not null"; the specification says MAY be null: nothing to check.
  ...stringColumn('SkuPriceId', '001', '002'),
  isNull('SkuPriceId-C-004-C', 'SkuPriceId', `"ChargeCategory" = 'Tax'`, 'when ChargeCategory is Tax'),
  notNull(
    'SkuPriceId-C-005-C',
    'SkuPriceId',
    USAGE_OR_PURCHASE_NOT_CORRECTION,
    ' on Usage or Purchase that is not a Correction',
  ),
  relation(
    'SkuPriceId-C-008-M',
    'one SkuId per SkuPriceId (CheckDistinctCount)',
    `"SkuPriceId" IN (SELECT "SkuPriceId" FROM f WHERE "SkuPriceId" IS NOT NULL GROUP BY 1 HAVING count(DISTINCT "SkuId") > 1)`,
  ),

  ...stringColumn('SubAccountId', '001', '002'),
  ...stringColumn('SubAccountName', '001', '002'),
  isNull('SubAccountName-C-003-C', 'SubAccountName', `"SubAccountId" IS NULL`, 'when SubAccountId is null'),
  notNull('SubAccountName-C-004-C', 'SubAccountName', `"SubAccountId" IS NOT NULL`, ' when SubAccountId is not null'),
];

/** FOCUS 1.2 column ids; any other column must be a custom one, prefixed x_. */
const FOCUS_COLUMNS = new Set(FOCUS_RULES.filter((r) => r.breaks === 'column').map((r) => r.rule.split(' ')[0]!));

/** Every rule of FOCUS_RULES over the FOCUS file at `path`, and the custom-column naming rule. */
export async function checkFocusFile(store: Store, path: string): Promise<RuleResult[]> {
  const sql = rawSql(store);
  const f = `read_parquet('${path.replaceAll("'", "''")}')`;
  const columns = (await sql.query<{ column_name: string }>(`DESCRIBE SELECT * FROM ${f}`)).map((c) => c.column_name);
  const out: RuleResult[] = [];
  for (const r of FOCUS_RULES) {
    const column = r.rule.split(' ')[0]!;
    if (r.breaks === 'column') {
      out.push({ id: r.id, rule: r.rule, violations: columns.includes(column) ? 0 : 1 });
      continue;
    }
    const [x] = await sql.query<{ n: bigint }>(
      `WITH f AS (SELECT * FROM ${f}) SELECT count(*) AS n FROM f WHERE ${r.breaks}`,
    );
    out.push({ id: r.id, rule: r.rule, violations: Number(x!.n) });
  }
  const custom = columns.filter((c) => !FOCUS_COLUMNS.has(c) && !c.startsWith('x_'));
  out.push({
    id: 'Custom columns (x_ prefix)',
    rule: 'a column that is not a FOCUS column is prefixed x_',
    violations: custom.length,
  });
  return out;
}

/** The rules a file breaks, as "id: rule (n rows)" lines. */
export const failures = (results: RuleResult[]): string[] =>
  results.filter((r) => r.violations > 0).map((r) => `${r.id}: ${r.rule} (${r.violations})`);

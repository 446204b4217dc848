// The metric catalogue: for each metric the API reports, its raw and billing units, the integer
// divisor between them (with where it comes from) and how values aggregate over time.
// Kept in configuration (the [metrics] tables of config/prices.toml) so that the divisors are
// versioned with the rates they price, under the same price-book revision.
import { z } from 'zod';

export type Aggregation = 'sum' | 'max';

export interface MetricDef {
  metric: string;
  apiVersion: 'v1' | 'v2';
  rawUnit: string;
  billingUnit: string;
  /** A name for people: column headers, charts, the price_metrics table. */
  displayName: string;
  /** Raw units per billing unit; exact. */
  divisor: bigint;
  /** 'max' for gauges (v1 sizes): a line takes the peak, never the sum. */
  aggregation: Aggregation;
  source: string;
}

export type MetricCatalogue = ReadonlyMap<string, MetricDef>;

const positiveInteger = z.union([z.string(), z.number(), z.bigint()]).transform((v, ctx) => {
  const s = typeof v === 'string' ? v.trim() : String(v);
  if (!/^[1-9][0-9]*$/.test(s)) {
    ctx.addIssue({ code: 'custom', message: 'expected a positive integer (a string of digits)' });
    return z.NEVER;
  }
  return BigInt(s);
});

export const metricEntrySchema = z.strictObject({
  api_version: z.enum(['v1', 'v2']),
  display_name: z.string().min(1).optional(),
  raw_unit: z.string().min(1),
  billing_unit: z.string().min(1),
  divisor: positiveInteger,
  aggregation: z.enum(['sum', 'max']),
  source: z.string().min(1, 'every divisor needs a source'),
});
export type MetricEntry = z.infer<typeof metricEntrySchema>;

export function buildCatalogue(entries: Record<string, MetricEntry>): MetricCatalogue {
  const out = new Map<string, MetricDef>();
  for (const [metric, e] of Object.entries(entries)) {
    out.set(metric, {
      metric,
      apiVersion: e.api_version,
      rawUnit: e.raw_unit,
      billingUnit: e.billing_unit,
      displayName: e.display_name ?? metric,
      divisor: e.divisor,
      aggregation: e.aggregation,
      source: e.source,
    });
  }
  return out;
}

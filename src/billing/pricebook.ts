// The price book (config/prices.toml): metric catalogue, rates by plan with effective dates,
// included allowances, a revision id and a source for every rate. Validated on load; every
// problem is reported at once with its dotted path.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { parse as parseToml } from 'smol-toml';
import { z } from 'zod';
import { buildCatalogue, metricEntrySchema, type MetricCatalogue } from './catalogue.js';
import { RATE_SCALE, formatScaled, parseDecimal } from './money.js';

export type AllowanceScope = 'program_month' | 'org_month';
export const ALLOWANCE_SCOPES: readonly AllowanceScope[] = ['program_month', 'org_month'];

export interface Rate {
  /** Stable id: `${plan}/${metric}@${effectiveFrom}` unless the book names one. */
  id: string;
  plan: string;
  metric: string;
  /** Normalised decimal string, 6 decimals. */
  rate: string;
  /** The rate in millionths of the currency unit per billing unit. */
  rateMicro: bigint;
  /** UTC date YYYY-MM-DD, inclusive. */
  effectiveFrom: string;
  /** UTC date YYYY-MM-DD, exclusive; null = open-ended. */
  effectiveTo: string | null;
  source: string;
  /** The book assumes this rate (or its dates) rather than quoting a published or contracted one. */
  assumed: boolean;
}

export interface Allowance {
  id: string;
  metric: string;
  plans: string[];
  /** Included quantity in billing units, as written. */
  included: string;
  /** Included quantity in raw units (included x divisor), exact. */
  includedRaw: bigint;
  scope: AllowanceScope;
  effectiveFrom: string;
  effectiveTo: string | null;
  source: string;
}

export interface PriceBook {
  revision: string;
  currency: string;
  path: string;
  /** sha256 of the file's bytes, so a report can prove which book priced it. */
  sha256: string;
  metrics: MetricCatalogue;
  rates: Rate[];
  allowances: Allowance[];
}

export class PriceBookError extends Error {
  constructor(
    readonly path: string,
    readonly problems: string[],
  ) {
    super(`invalid price book ${path}:\n  ${problems.join('\n  ')}`);
    this.name = 'PriceBookError';
  }
}

const DATE_MSG = 'expected a date YYYY-MM-DD';
const dateString = z.unknown().transform((v, ctx) => {
  // smol-toml gives unquoted local dates as a Date subclass with isDate(); quoted strings stay strings.
  let s: string | undefined;
  if (typeof v === 'string') s = v;
  else if (v instanceof Date && typeof (v as { isDate?: () => boolean }).isDate === 'function') {
    if ((v as unknown as { isDate: () => boolean }).isDate()) s = v.toISOString().slice(0, 10);
  }
  if (s === undefined || !/^\d{4}-\d{2}-\d{2}$/.test(s) || Number.isNaN(Date.parse(`${s}T00:00:00Z`)) ||
      new Date(`${s}T00:00:00Z`).toISOString().slice(0, 10) !== s) {
    ctx.addIssue({ code: 'custom', message: DATE_MSG });
    return z.NEVER;
  }
  return s;
});

const decimalString = (scale: number) =>
  z.string().refine((s) => parseDecimal(s, scale) !== undefined, {
    message: `expected a non-negative decimal string with at most ${scale} decimals, e.g. "0.106"`,
  });

const rateSchema = z.strictObject({
  id: z.string().min(1).optional(),
  plan: z.string().min(1),
  metric: z.string().min(1),
  rate: decimalString(RATE_SCALE),
  effective_from: dateString,
  effective_to: dateString.optional(),
  source: z.string().min(1, 'every rate needs a source'),
  assumed: z.boolean().default(false),
});

const allowanceSchema = z.strictObject({
  id: z.string().min(1).optional(),
  metric: z.string().min(1),
  plans: z.array(z.string().min(1)).min(1),
  included: decimalString(9),
  scope: z.enum(ALLOWANCE_SCOPES as [AllowanceScope, ...AllowanceScope[]]),
  effective_from: dateString,
  effective_to: dateString.optional(),
  source: z.string().min(1, 'every allowance needs a source'),
});

const bookSchema = z.strictObject({
  revision: z.string().min(1, 'the book needs a revision id'),
  currency: z.string().regex(/^[A-Z]{3}$/, 'expected an ISO 4217 code such as "USD"'),
  metrics: z.record(z.string(), metricEntrySchema),
  rates: z.array(rateSchema).default([]),
  allowances: z.array(allowanceSchema).default([]),
});

function pathString(path: readonly PropertyKey[]): string {
  let out = '';
  for (const p of path) {
    if (typeof p === 'number') out += `[${p}]`;
    else out += out === '' ? String(p) : `.${String(p)}`;
  }
  return out || '(root)';
}

function overlaps(a: { from: string; to: string | null }, b: { from: string; to: string | null }): boolean {
  const aTo = a.to ?? '9999-12-31';
  const bTo = b.to ?? '9999-12-31';
  return a.from < bTo && b.from < aTo;
}

/** Parses and validates price-book text; `origin` names it in errors. */
export function parsePriceBook(text: string, origin: string): PriceBook {
  let raw: unknown;
  try {
    raw = parseToml(text);
  } catch (e) {
    throw new PriceBookError(origin, [`not valid TOML: ${(e as Error).message}`]);
  }
  const parsed = bookSchema.safeParse(raw);
  if (!parsed.success) {
    throw new PriceBookError(
      origin,
      parsed.error.issues.map((i) => `${pathString(i.path)}: ${i.message}`),
    );
  }
  const b = parsed.data;
  const problems: string[] = [];
  const metrics = buildCatalogue(b.metrics);

  const rates: Rate[] = b.rates.map((r, i) => {
    if (!metrics.has(r.metric)) problems.push(`rates[${i}].metric: "${r.metric}" is not in [metrics]`);
    if (r.effective_to !== undefined && r.effective_to <= r.effective_from)
      problems.push(`rates[${i}].effective_to: must be after effective_from (${r.effective_from})`);
    const rateMicro = parseDecimal(r.rate, RATE_SCALE)!;
    return {
      id: r.id ?? `${r.plan}/${r.metric}@${r.effective_from}`,
      plan: r.plan,
      metric: r.metric,
      rate: formatScaled(rateMicro, RATE_SCALE),
      rateMicro,
      effectiveFrom: r.effective_from,
      effectiveTo: r.effective_to ?? null,
      source: r.source,
      assumed: r.assumed,
    };
  });
  rates.forEach((r, i) => {
    rates.forEach((o, j) => {
      if (j < i && o.plan === r.plan && o.metric === r.metric &&
          overlaps({ from: r.effectiveFrom, to: r.effectiveTo }, { from: o.effectiveFrom, to: o.effectiveTo }))
        problems.push(`rates[${i}]: overlaps rates[${j}] for plan "${r.plan}" and metric "${r.metric}"`);
    });
  });
  const ids = new Map<string, number>();
  rates.forEach((r, i) => {
    const j = ids.get(r.id);
    if (j !== undefined) problems.push(`rates[${i}].id: "${r.id}" is also used by rates[${j}]`);
    ids.set(r.id, i);
  });

  const allowances: Allowance[] = b.allowances.map((a, i) => {
    const def = metrics.get(a.metric);
    let includedRaw = 0n;
    if (!def) problems.push(`allowances[${i}].metric: "${a.metric}" is not in [metrics]`);
    else {
      if (def.aggregation !== 'sum')
        problems.push(`allowances[${i}].metric: "${a.metric}" is a gauge (aggregation max); allowances apply to summed metrics only`);
      // included is in billing units; it must be a whole number of raw units.
      const scaled = parseDecimal(a.included, 9)!;
      const num = scaled * def.divisor;
      if (num % 1_000_000_000n !== 0n)
        problems.push(`allowances[${i}].included: ${a.included} ${def.billingUnit} is not a whole number of ${def.rawUnit}`);
      includedRaw = num / 1_000_000_000n;
    }
    if (a.effective_to !== undefined && a.effective_to <= a.effective_from)
      problems.push(`allowances[${i}].effective_to: must be after effective_from (${a.effective_from})`);
    return {
      id: a.id ?? `${a.metric}/${a.scope}@${a.effective_from}`,
      metric: a.metric,
      plans: a.plans,
      included: a.included,
      includedRaw,
      scope: a.scope,
      effectiveFrom: a.effective_from,
      effectiveTo: a.effective_to ?? null,
      source: a.source,
    };
  });
  allowances.forEach((a, i) => {
    allowances.forEach((o, j) => {
      if (j < i && o.metric === a.metric && o.plans.some((p) => a.plans.includes(p)) &&
          overlaps({ from: a.effectiveFrom, to: a.effectiveTo }, { from: o.effectiveFrom, to: o.effectiveTo }))
        problems.push(`allowances[${i}]: overlaps allowances[${j}] for metric "${a.metric}" on a shared plan`);
    });
  });

  if (problems.length) throw new PriceBookError(origin, problems);
  return {
    revision: b.revision,
    currency: b.currency,
    path: origin,
    sha256: createHash('sha256').update(text).digest('hex'),
    metrics,
    rates,
    allowances,
  };
}

/** Reads and validates a price book file; throws PriceBookError listing every problem. */
export function loadPriceBook(path: string): PriceBook {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    throw new PriceBookError(path, [`cannot read: ${(e as Error).message}`]);
  }
  return parsePriceBook(text, path);
}

/** The rate in force for a plan and metric at an instant, if the book has one. */
export function rateAt(book: PriceBook, plan: string, metric: string, at: Date): Rate | undefined {
  const day = at.toISOString().slice(0, 10);
  return book.rates.find(
    (r) => r.plan === plan && r.metric === metric && r.effectiveFrom <= day && (r.effectiveTo === null || day < r.effectiveTo),
  );
}


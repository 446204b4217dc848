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
  if (
    s === undefined ||
    !/^\d{4}-\d{2}-\d{2}$/.test(s) ||
    Number.isNaN(Date.parse(`${s}T00:00:00Z`)) ||
    new Date(`${s}T00:00:00Z`).toISOString().slice(0, 10) !== s
  ) {
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

function tomlOf(text: string, origin: string): Record<string, unknown> {
  try {
    return parseToml(text);
  } catch (e) {
    throw new PriceBookError(origin, [`not valid TOML: ${(e as Error).message.split('\n')[0]}`]);
  }
}

/** Parses and validates price-book text; `origin` names it in errors. */
export function parsePriceBook(text: string, origin: string): PriceBook {
  return bookFromRaw(tomlOf(text, origin), origin, createHash('sha256').update(text).digest('hex'));
}

function bookFromRaw(raw: unknown, origin: string, sha256: string): PriceBook {
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

  const rates = checkedRates(b.rates, metrics, problems);
  const allowances = checkedAllowances(b.allowances, metrics, problems);

  if (problems.length) throw new PriceBookError(origin, problems);
  return {
    revision: b.revision,
    currency: b.currency,
    path: origin,
    sha256,
    metrics,
    rates,
    allowances,
  };
}

type RawBook = z.infer<typeof bookSchema>;

/** The book's rates, each checked against the catalogue and the others (ids, overlapping periods); problems appended. */
function checkedRates(raw: RawBook['rates'], metrics: ReturnType<typeof buildCatalogue>, problems: string[]): Rate[] {
  const rates: Rate[] = raw.map((r, i) => {
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
      if (
        j < i &&
        o.plan === r.plan &&
        o.metric === r.metric &&
        overlaps({ from: r.effectiveFrom, to: r.effectiveTo }, { from: o.effectiveFrom, to: o.effectiveTo })
      )
        problems.push(`rates[${i}]: overlaps rates[${j}] for plan "${r.plan}" and metric "${r.metric}"`);
    });
  });
  const ids = new Map<string, number>();
  rates.forEach((r, i) => {
    const j = ids.get(r.id);
    if (j !== undefined) problems.push(`rates[${i}].id: "${r.id}" is also used by rates[${j}]`);
    ids.set(r.id, i);
  });
  return rates;
}

/** The book's allowances, each checked against the catalogue (summed metrics, whole raw units) and the others; problems appended. */
function checkedAllowances(
  raw: RawBook['allowances'],
  metrics: ReturnType<typeof buildCatalogue>,
  problems: string[],
): Allowance[] {
  const allowances: Allowance[] = raw.map((a, i) => {
    const def = metrics.get(a.metric);
    let includedRaw = 0n;
    if (!def) problems.push(`allowances[${i}].metric: "${a.metric}" is not in [metrics]`);
    else {
      if (def.aggregation !== 'sum')
        problems.push(
          `allowances[${i}].metric: "${a.metric}" is a gauge (aggregation max); allowances apply to summed metrics only`,
        );
      // included is in billing units; it must be a whole number of raw units.
      const scaled = parseDecimal(a.included, 9)!;
      const num = scaled * def.divisor;
      if (num % 1_000_000_000n !== 0n)
        problems.push(
          `allowances[${i}].included: ${a.included} ${def.billingUnit} is not a whole number of ${def.rawUnit}`,
        );
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
      if (
        j < i &&
        o.metric === a.metric &&
        o.plans.some((p) => a.plans.includes(p)) &&
        overlaps({ from: a.effectiveFrom, to: a.effectiveTo }, { from: o.effectiveFrom, to: o.effectiveTo })
      )
        problems.push(`allowances[${i}]: overlaps allowances[${j}] for metric "${a.metric}" on a shared plan`);
    });
  });
  return allowances;
}

function readBook(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch (e) {
    // Node's message repeats the path the error already names: keep its errno and reason.
    throw new PriceBookError(path, [`cannot read: ${(e as Error).message.split(', open')[0]}`]);
  }
}

/**
 * Reads and validates a price book file; throws PriceBookError listing every problem. With an overlay
 * (an operator's own partial book, `report.price_overlay`), the overlay's metrics replace the base's by
 * name, its rates and allowances replace the base's with the same key (`id`, else plan/metric@from or
 * metric/scope@from) and add the others; the result is validated as one book whose revision names both.
 */
export function loadPriceBook(path: string, overlayPath?: string): PriceBook {
  const text = readBook(path);
  if (overlayPath === undefined) return parsePriceBook(text, path);
  const overlayText = readBook(overlayPath);
  const base = tomlOf(text, path);
  const over = tomlOf(overlayText, overlayPath);
  if (typeof over.revision !== 'string' || over.revision === '') {
    throw new PriceBookError(overlayPath, [
      'revision: an overlay needs its own revision id, e.g. revision = "ours-2026-01"',
    ]);
  }
  if (over.currency !== undefined && over.currency !== base.currency) {
    throw new PriceBookError(overlayPath, [
      `currency: "${String(over.currency)}" differs from the base book's "${String(base.currency)}"`,
    ]);
  }
  const merged = {
    ...base,
    revision: `${String(base.revision)}+${over.revision}`,
    metrics: { ...(base.metrics as object), ...(over.metrics as object) },
    rates: overlayByKey(
      base.rates,
      over.rates,
      (r) => `${String(r.plan)}/${String(r.metric)}@${dayOf(r.effective_from)}`,
    ),
    allowances: overlayByKey(
      base.allowances,
      over.allowances,
      (a) => `${String(a.metric)}/${String(a.scope)}@${dayOf(a.effective_from)}`,
    ),
  };
  const sha = createHash('sha256').update(text).update('\0').update(overlayText).digest('hex');
  return bookFromRaw(merged, `${path} overlaid by ${overlayPath}`, sha);
}

function dayOf(v: unknown): string {
  return v instanceof Date ? v.toISOString().slice(0, 10) : String(v);
}

function overlayByKey(base: unknown, over: unknown, key: (e: Record<string, unknown>) => string): unknown[] {
  const list = (v: unknown) => (Array.isArray(v) ? (v as Record<string, unknown>[]) : []);
  const keyOf = (e: Record<string, unknown>) => (typeof e.id === 'string' ? e.id : key(e));
  const out = [...list(base)];
  for (const e of list(over)) {
    const i = out.findIndex((b) => keyOf(b) === keyOf(e));
    if (i >= 0) out[i] = e;
    else out.push(e);
  }
  return out;
}

// Loads the price book into the database's price tables (migration 004) when the loaded book's
// sha256 differs from the file's, in one transaction, so the reports, the analysts' spend views and
// the analyst copy all price with exactly the book that was validated.
import type { Store } from '../store/store.js';
import { loadPriceBook, PriceBookError, type PriceBook } from '../billing/pricebook.js';

/** Replaces the price tables with `book` unless they already hold it; true when they changed. */
export async function refreshPrices(store: Store, book: PriceBook, now: Date = new Date()): Promise<boolean> {
  const loaded = await store.report.prices.loadedPriceBooks();
  if (loaded.length === 1 && loaded[0] === book.sha256) return false;
  const metrics = [...book.metrics.values()].map((m) => ({
    metric: m.metric,
    api_version: m.apiVersion,
    display_name: m.displayName,
    raw_unit: m.rawUnit,
    billing_unit: m.billingUnit,
    divisor: m.divisor.toString(),
    aggregation: m.aggregation,
    source: m.source,
  }));
  const rates = book.rates.map((r) => ({
    rate_id: r.id,
    plan: r.plan,
    metric: r.metric,
    rate: r.rate,
    rate_micro: r.rateMicro.toString(),
    effective_from: r.effectiveFrom,
    effective_to: r.effectiveTo,
    unit: `${book.currency} per ${book.metrics.get(r.metric)?.billingUnit ?? 'unit'}`,
    source: r.source,
  }));
  const allowances = book.allowances.flatMap((a) =>
    a.plans.map((plan) => ({
      allowance_id: a.id,
      plan,
      metric: a.metric,
      included_raw: a.includedRaw.toString(),
      scope: a.scope,
      effective_from: a.effectiveFrom,
      effective_to: a.effectiveTo,
      source: a.source,
    })),
  );
  await store.report.prices.replacePriceTables({
    revision: book.revision,
    currency: book.currency,
    sha256: book.sha256,
    path: book.path,
    loadedAt: now,
    metrics,
    rates,
    allowances,
  });
  return true;
}

/**
 * After a collect, before the analyst copy is published: keeps the database's price tables in step
 * with the configured price book. A broken book never fails a collection (consumption comes first);
 * it is named in a warning, the previous tables stay, and `report` refuses the book with its problems.
 */
export async function refreshPricesIfValid(
  store: Store,
  { path, overlay }: { path: string; overlay?: string },
  log: { warn(msg: string, fields?: Record<string, unknown>): void },
): Promise<void> {
  let book: PriceBook;
  try {
    book = loadPriceBook(path, overlay);
  } catch (err) {
    if (!(err instanceof PriceBookError)) throw err;
    log.warn('price book not loaded into the database; the spend views keep the previous one', {
      path,
      ...(overlay ? { overlay } : {}),
      problems: err.problems,
    });
    return;
  }
  await refreshPrices(store, book);
}

// Loads a price book into the session's TEMP price tables and creates the spend views and macros
// (src/report/sql), so that spend is computed in SQL against exactly the book that was validated.
import type { Store } from '../store/store.js';
import { readSql } from '../store/sql.js';
import type { PriceBook } from '../billing/pricebook.js';

export async function installPrices(store: Store, book: PriceBook): Promise<void> {
  const metrics = [...book.metrics.values()].map((m) => ({
    metric: m.metric,
    api_version: m.apiVersion,
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
  await store.run(readSql('src/report/sql/price_tables.sql'));
  await store.run(readSql('src/report/sql/price_load_book.sql'), { revision: book.revision, currency: book.currency, sha256: book.sha256 });
  // from_json of an empty array yields no rows, which is what an empty section means.
  await store.run(readSql('src/report/sql/price_load_metrics.sql'), { json: JSON.stringify(metrics) });
  await store.run(readSql('src/report/sql/price_load_rates.sql'), { json: JSON.stringify(rates) });
  await store.run(readSql('src/report/sql/price_load_allowances.sql'), { json: JSON.stringify(allowances) });
  await store.run(readSql('src/report/sql/spend.sql'));
}

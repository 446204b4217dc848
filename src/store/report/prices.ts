// The price tables of migration 004: which book they hold, and replacing them with another in one
// transaction (report/prices.ts decides when and turns the book into rows).
import type { StoreContext } from '../facade/context.js';
import { readSql } from '../sql.js';

/** A price book as rows of the price tables (each section as JSON rows of its table). */
export interface PriceTableRows {
  revision: string;
  currency: string;
  sha256: string;
  path: string;
  loadedAt: Date;
  metrics: Record<string, unknown>[];
  rates: Record<string, unknown>[];
  allowances: Record<string, unknown>[];
}

/** The price tables (Store.report.prices). */
export class PriceTables {
  /** @internal Created by the Store. */
  constructor(private readonly cx: StoreContext) {}

  /** The sha256 of each price book loaded (one row when the tables hold a book). */
  async loadedPriceBooks(): Promise<string[]> {
    const loaded = await this.cx.sql.query<{ sha256: string }>(readSql('src/store/report/sql/price_loaded.sql'));
    return loaded.map((r) => r.sha256);
  }

  /** Replaces the price tables with one book, in one transaction. */
  async replacePriceTables(b: PriceTableRows): Promise<void> {
    const { revision } = b;
    const sql = this.cx.sql;
    await this.cx.transaction(async () => {
      await sql.run(readSql('src/store/report/sql/price_clear.sql'));
      await sql.run(readSql('src/store/report/sql/price_load_book.sql'), {
        revision,
        currency: b.currency,
        sha256: b.sha256,
        path: b.path,
        loaded_at: b.loadedAt,
      });
      // from_json of an empty array yields no rows, which is what an empty section means.
      await sql.run(readSql('src/store/report/sql/price_load_metrics.sql'), {
        revision,
        json: JSON.stringify(b.metrics),
      });
      await sql.run(readSql('src/store/report/sql/price_load_rates.sql'), { revision, json: JSON.stringify(b.rates) });
      await sql.run(readSql('src/store/report/sql/price_load_allowances.sql'), {
        revision,
        json: JSON.stringify(b.allowances),
      });
    });
  }
}

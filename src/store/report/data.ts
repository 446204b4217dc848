// The report's side of the store as one typed object (Store.report): the SQL that stages, reads, copies,
// finalises and prices a report, grouped by what it does. report/ decides what to compute and write;
// these run it on the store's connection (the run's TEMP tables live there), inside the store's exclusive
// section like every other store operation (ARCHITECTURE.md, "Storage").
import type { StoreContext } from '../facade/context.js';
import { Finalized } from './finalize.js';
import { FocusData } from './focus.js';
import { PriceTables } from './prices.js';
import { ReportSettingsControl } from './settings.js';
import { Stages } from './stages.js';
import { ReportTables } from './tables.js';

export class ReportData {
  /** rpt_days, the report tables and the detail, computed in bounded stages. */
  readonly stages: Stages;
  /** Reads and copies of the report's TEMP tables, and the report's small reads. */
  readonly tables: ReportTables;
  /** DuckDB's settings while a report runs. */
  readonly settings: ReportSettingsControl;
  /** The FOCUS table and its finalisations. */
  readonly focus: FocusData;
  /** A month's finalised files and the corrections since. */
  readonly finalized: Finalized;
  /** The price tables. */
  readonly prices: PriceTables;

  /** @internal Created by the Store. */
  constructor(cx: StoreContext) {
    this.stages = new Stages(cx);
    this.tables = new ReportTables(cx);
    this.settings = new ReportSettingsControl(cx);
    this.focus = new FocusData(cx);
    this.finalized = new Finalized(cx);
    this.prices = new PriceTables(cx);
  }
}

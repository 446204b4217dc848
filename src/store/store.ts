// The DuckDB store: opening the file (waiting politely for a held lock), migrations, collection runs,
// usage batches, inventory, coverage, the dataset export and the report data, each a topic object of
// the Store (store.runs, store.inventory, store.coverage, store.usage, store.dataset, store.report).
//
// Concurrency: DuckDB lets one process hold a file for writing, and any process holding it (even
// read-only) blocks a writer. The collector therefore waits for a held lock with backoff, and analysts
// open the published copy (publish.ts) rather than this file. Inside the process, every write runs in
// the store's exclusive section, so a batch commit never interleaves with a transaction of the main
// connection.
// One module per job: open.ts (opening, lock retries), inProcessLock.ts (the in-process registry),
// slots.ts (the page semaphore), facade.ts (the Store and its exclusive section), errors.ts;
// usageBatch.ts (a batch's staging and commit), usageBatchErrors.ts (what a batch refuses with).

export * from './types.js';
export { DeletionHeldError, PageContentError, UsageBatchError } from './usageBatchErrors.js';
export { SchemaTooNewError } from './migrations.js';
export {
  analystCopyName,
  isOutOfMemory,
  isStoreCorruption,
  StoreCorruptError,
  StoreLockedError,
  StoreMissingError,
} from './errors.js';
export { IN_MEMORY } from './inProcessLock.js';
export { DEFAULT_LOCK_TIMEOUT_MS, openStore, STORE_STORAGE_VERSION, type OpenOptions } from './open.js';
export { PAGE_SLOTS, Store } from './facade.js';
export {
  DATASET_LAYOUT,
  DATASET_STREAMS,
  DIMENSION_STREAMS,
  STAGED_PARTITION,
  unitsOfWindow,
  type ChangedWindow,
  type DatasetFingerprint,
  type DatasetPartitionKey,
  type DatasetStream,
} from './dataset.js';
export type { DatasetState } from './facade/exports.js';
export type { BucketTable, HourlyDay, Removal } from './facade/usage.js';

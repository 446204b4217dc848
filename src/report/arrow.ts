// Arrow IPC files (`--format arrow`) for analysts whose dataframes read Arrow directly (pandas,
// polars). DuckDB's Node client hands back JS values, so the columns are rebuilt here with
// apache-arrow, with their types kept: BIGINT as int64 (exact, from bigint), DECIMAL(p,s) as
// decimal128(p,s) from the exact scaled integer, TIMESTAMPTZ as timestamp[us, UTC], DATE as
// date32. Off the ingest path: only reports and the dataset export write it. The table is read and
// written one record batch at a time, so memory stays bounded by a batch, not by the table.
import { createWriteStream } from 'node:fs';
import { pipeline } from 'node:stream/promises';
import {
  Bool,
  DateDay,
  Decimal,
  Float64,
  Int32,
  Int64,
  RecordBatchFileWriter,
  Table,
  TimeUnit,
  Timestamp,
  Utf8,
  makeData,
  makeVector,
  vectorFromArray,
  type DataType,
  type Vector,
} from 'apache-arrow';
import type { Store } from '../store/store.js';
import type { DescribedColumn, ReportTable } from '../store/report/tables.js';

type ColumnType = DescribedColumn;

const DECIMAL = /^DECIMAL\((\d+),(\d+)\)$/;

function validity(values: unknown[]): { nullBitmap: Uint8Array; nullCount: number } {
  const nullBitmap = new Uint8Array(Math.ceil(values.length / 8));
  let nullCount = 0;
  values.forEach((v, i) => {
    if (v === null || v === undefined) nullCount++;
    else nullBitmap[i >> 3]! |= 1 << (i & 7);
  });
  return { nullBitmap, nullCount };
}

/** A two's-complement 128-bit integer as four little-endian 32-bit words. */
function putInt128(words: Uint32Array, i: number, v: bigint): void {
  let u = BigInt.asUintN(128, v);
  for (let w = 0; w < 4; w++) {
    words[i * 4 + w] = Number(u & 0xffffffffn);
    u >>= 32n;
  }
}

function column(c: ColumnType, values: unknown[]): { type: DataType; vector: Vector } {
  const length = values.length;
  const dec = DECIMAL.exec(c.column_type);
  if (dec) {
    const type = new Decimal(Number(dec[2]), Number(dec[1]), 128);
    const words = new Uint32Array(length * 4);
    values.forEach((v, i) => v !== null && putInt128(words, i, BigInt(v as string)));
    return { type, vector: makeVector(makeData({ type, length, data: words, ...validity(values) })) };
  }
  switch (c.column_type) {
    case 'BIGINT': {
      const type = new Int64();
      const data = BigInt64Array.from(values, (v) => (v === null ? 0n : BigInt(v as bigint)));
      return { type, vector: makeVector(makeData({ type, length, data, ...validity(values) })) };
    }
    case 'INTEGER':
    case 'SMALLINT':
    case 'TINYINT': {
      const type = new Int32();
      const data = Int32Array.from(values, (v) => (v === null ? 0 : Number(v)));
      return { type, vector: makeVector(makeData({ type, length, data, ...validity(values) })) };
    }
    case 'TIMESTAMP WITH TIME ZONE':
    case 'TIMESTAMP': {
      const type = new Timestamp(TimeUnit.MICROSECOND, c.column_type === 'TIMESTAMP' ? null : 'UTC');
      const data = BigInt64Array.from(values, (v) => (v === null ? 0n : BigInt(v as bigint)));
      return { type, vector: makeVector(makeData({ type, length, data, ...validity(values) })) };
    }
    case 'DATE': {
      const type = new DateDay();
      const data = Int32Array.from(values, (v) => (v === null ? 0 : Number(v)));
      return { type, vector: makeVector(makeData({ type, length, data, ...validity(values) })) };
    }
    case 'DOUBLE':
    case 'FLOAT':
      return { type: new Float64(), vector: vectorFromArray(values as (number | null)[], new Float64()) };
    case 'BOOLEAN':
      return { type: new Bool(), vector: vectorFromArray(values as (boolean | null)[], new Bool()) };
    default:
      return {
        type: new Utf8(),
        vector: vectorFromArray(
          values.map((v) => (v === null ? null : String(v))),
          new Utf8(),
        ),
      };
  }
}

/** Rows per record batch: large enough for fast columnar reads, small enough to keep memory flat. */
const BATCH_ROWS = 65_536;

/**
 * Reads one batch of rows by a range of `key` (cheap, unlike OFFSET) and converts it to Arrow. The key
 * is line_no when the relation has it (a report's lines are numbered 1..n in order; a report stage may
 * be a view over Parquet parts, which has no rowid), else the table's rowid.
 */
async function readBatch(
  store: Store,
  table: ReportTable,
  cols: ColumnType[],
  key: 'line_no' | 'rowid',
  from: bigint,
): Promise<Table> {
  const rows = await store.report.tables.exactRows(table, cols, key, from, from + BigInt(BATCH_ROWS));
  const vectors: Record<string, Vector> = {};
  for (const c of cols)
    vectors[c.column_name] = column(
      c,
      rows.map((r) => r[c.column_name] ?? null),
    ).vector;
  return new Table(vectors);
}

/**
 * Writes a (TEMP) table, in its row order, as an Arrow IPC file at `path`, one record batch of at
 * most BATCH_ROWS rows at a time; returns the row count.
 */
export async function writeArrowFile(store: Store, table: ReportTable, path: string): Promise<number> {
  const cols = await store.report.tables.describeTable(table);
  const key = cols.some((c) => c.column_name === 'line_no') ? 'line_no' : 'rowid';
  const bounds = await store.report.tables.keyBounds(table, key);
  const writer = new RecordBatchFileWriter();
  const written = pipeline(writer.toNodeStream(), createWriteStream(path));
  // Batches one by one: writing a whole Table would finish the file after it.
  const put = (t: Table) => t.batches.forEach((b) => writer.write(b));
  try {
    // An empty table still gets its schema, from one empty batch.
    if (bounds.last === null) put(await readBatch(store, table, cols, key, 0n));
    for (let from = bounds.first ?? 0n; bounds.last !== null && from <= bounds.last; from += BigInt(BATCH_ROWS)) {
      put(await readBatch(store, table, cols, key, from));
    }
  } catch (err) {
    writer.abort();
    await written.catch(() => undefined);
    throw err;
  }
  writer.finish();
  await written;
  return Number(bounds.n);
}

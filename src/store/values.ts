// Conversion between JavaScript values and DuckDB values, in both directions, so that callers of the
// store never see DuckDB's value classes. Integers stay exact: BIGINT binds from and reads into bigint.
import {
  BIGINT,
  BOOLEAN,
  DOUBLE,
  DuckDBDecimalValue,
  DuckDBTimestampTZValue,
  DuckDBTypeId,
  HUGEINT,
  INTEGER,
  JSDuckDBValueConverter,
  LIST,
  TIMESTAMPTZ,
  VARCHAR,
  listValue,
  type DuckDBType,
  type DuckDBValue,
  type DuckDBValueConverter,
  type JS,
} from '@duckdb/node-api';

const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;
const INT32_MIN = -(2 ** 31);
const INT32_MAX = 2 ** 31 - 1;

/** A JS Date as a DuckDB TIMESTAMPTZ (microseconds since the epoch, UTC). */
export function timestampTZ(d: Date): DuckDBTimestampTZValue {
  const ms = d.getTime();
  if (!Number.isFinite(ms)) throw new RangeError('invalid Date (NaN) where a timestamp was expected');
  return new DuckDBTimestampTZValue(BigInt(ms) * 1000n);
}

interface Bound {
  value: DuckDBValue;
  type: DuckDBType | undefined;
}

function isDuckDBValueObject(v: object): boolean {
  // DuckDB's own value classes (DuckDBListValue, DuckDBDecimalValue, ...) pass through unchanged.
  return v.constructor !== Object && v.constructor?.name?.startsWith('DuckDB') === true;
}

function bindOne(v: unknown): Bound {
  if (v === null || v === undefined) return { value: null, type: undefined };
  switch (typeof v) {
    case 'string':
      return { value: v, type: VARCHAR };
    case 'boolean':
      return { value: v, type: BOOLEAN };
    case 'bigint':
      // BIGINT whenever it fits, so that comparisons with BIGINT columns stay in int64.
      return { value: v, type: v >= INT64_MIN && v <= INT64_MAX ? BIGINT : HUGEINT };
    case 'number':
      if (Number.isInteger(v)) {
        if (v >= INT32_MIN && v <= INT32_MAX) return { value: v, type: INTEGER };
        if (!Number.isSafeInteger(v)) throw new RangeError(`integer ${v} is beyond 2^53 and not exact: pass a bigint`);
        return { value: BigInt(v), type: BIGINT };
      }
      return { value: v, type: DOUBLE };
    case 'object':
      if (v instanceof Date) return { value: timestampTZ(v), type: TIMESTAMPTZ };
      if (Array.isArray(v)) return bindList(v);
      if (isDuckDBValueObject(v)) return { value: v as DuckDBValue, type: undefined };
      break;
    default:
      break;
  }
  throw new TypeError(
    `cannot bind a value of type ${typeof v === 'object' ? v.constructor?.name : typeof v} as an SQL parameter`,
  );
}

function bindList(items: readonly unknown[]): Bound {
  const bound = items.map(bindOne);
  // The element type comes from the first non-null item; an empty or all-null list is VARCHAR[].
  const elementType = bound.find((b) => b.type !== undefined)?.type ?? VARCHAR;
  return { value: listValue(bound.map((b) => b.value)), type: LIST(elementType) };
}

export interface BoundParams {
  values: Record<string, DuckDBValue>;
  // An undefined entry lets DuckDB infer the type (used for NULL and DuckDB's own value objects).
  types: Record<string, DuckDBType | undefined>;
}

/**
 * Parameters as DuckDB takes them. Date -> TIMESTAMPTZ, bigint -> BIGINT (HUGEINT beyond int64),
 * integer number -> INTEGER/BIGINT, other number -> DOUBLE, string -> VARCHAR, array -> LIST,
 * null/undefined -> NULL. Named ($name) only: the store's one parameter style.
 */
export function bindParams(params: Record<string, unknown>): BoundParams {
  const values: Record<string, DuckDBValue> = {};
  const types: Record<string, DuckDBType | undefined> = {};
  for (const [k, v] of Object.entries(params)) {
    const b = bindOne(v);
    values[k] = b.value;
    types[k] = b.type;
  }
  return { values, types };
}

/**
 * Result values as JavaScript: BIGINT/HUGEINT -> bigint, TIMESTAMPTZ (and TIMESTAMP, DATE) -> Date,
 * DECIMAL -> string with every digit (e.g. '12.30'; never a float), VARCHAR -> string,
 * INTEGER/DOUBLE -> number, LIST -> array, STRUCT -> object, NULL -> null.
 */
export const resultConverter: DuckDBValueConverter<unknown> = (value, type, self) => {
  if (value !== null && type.typeId === DuckDBTypeId.DECIMAL && value instanceof DuckDBDecimalValue) {
    return value.toString();
  }
  // Nested values (lists, structs) recurse through `self`, so their decimals are exact too.
  return JSDuckDBValueConverter(value, type, self as DuckDBValueConverter<JS>);
};

# An independent reader of the exported dataset: pyarrow's dataset API with Hive partitioning
# (neither DuckDB nor this project's writer). Prints JSON: per dataset, its rows as lists of
# strings (exact: int64 and decimals as their digits, timestamps as epoch microseconds), sorted.
import json
import sys

import pyarrow as pa
import pyarrow.dataset as ds

root = sys.argv[1]
out = {}
for name, cols in json.loads(sys.argv[2]).items():
    table = ds.dataset(f"{root}/{name}", format="parquet", partitioning="hive").to_table()
    # Column by column: a timestamp cast to int64 is its count of the type's unit (microseconds here).
    # Made a scalar per cell, the timestamps took most of this reader's time.
    columns = []
    for c in cols:
        col = table.column(c)
        if pa.types.is_timestamp(col.type):
            col = col.cast(pa.int64())
        columns.append([None if v is None else str(v) for v in col.to_pylist()])
    rows = [list(r) for r in zip(*columns)]
    rows.sort(key=lambda x: json.dumps(x))
    out[name] = {"rows": rows, "types": {c: str(table.schema.field(c).type) for c in cols}}
print(json.dumps(out))

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
    rows = []
    for r in table.select(cols).to_pylist():
        row = []
        for c in cols:
            v = r[c]
            t = table.schema.field(c).type
            if v is None:
                row.append(None)
            elif pa.types.is_timestamp(t):
                row.append(str(int(pa.scalar(v, type=t).cast(pa.int64()).as_py())))
            else:
                row.append(str(v))
        rows.append(row)
    rows.sort(key=lambda x: json.dumps(x))
    out[name] = {"rows": rows, "types": {c: str(table.schema.field(c).type) for c in cols}}
print(json.dumps(out))

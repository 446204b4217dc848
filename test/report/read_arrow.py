# Reads report Arrow IPC files with pyarrow and polars and compares them with the Parquet files
# (read by pyarrow). Prints JSON per report: types, equality, row counts, polars dtypes.
import json
import sys

import polars as pl
import pyarrow.ipc as ipc
import pyarrow.parquet as pq

out = {}
for name in sys.argv[2:]:
    arrow = ipc.open_file(f"{sys.argv[1]}/{name}.arrow").read_all()
    parquet = pq.read_table(f"{sys.argv[1]}/{name}.parquet")
    frame = pl.read_ipc(f"{sys.argv[1]}/{name}.arrow")
    out[name] = {
        "rows": arrow.num_rows,
        "arrow_types": {f.name: str(f.type) for f in arrow.schema},
        "parquet_types": {f.name: str(f.type) for f in parquet.schema},
        "equal": arrow.equals(parquet),
        "polars_rows": frame.height,
        "polars_types": {k: str(v) for k, v in frame.schema.items()},
        "polars_equal": frame.equals(pl.from_arrow(parquet)),
        "polars_cost_sum": str(frame["cost"].sum()) if "cost" in frame.columns else None,
    }
print(json.dumps(out))

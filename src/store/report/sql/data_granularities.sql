-- Query: data_granularities (report input)
-- Parameters: $range_start TIMESTAMPTZ, $range_end TIMESTAMPTZ (exclusive).
-- Usage rows per granularity in the range, for choosing a granularity when coverage says nothing.
SELECT granularity, count(*) AS n_rows FROM (
  SELECT granularity FROM usage_program WHERE timeframe_start >= $range_start AND timeframe_start < $range_end
  UNION ALL
  SELECT granularity FROM usage_framework WHERE timeframe_start >= $range_start AND timeframe_start < $range_end
) GROUP BY granularity ORDER BY granularity;

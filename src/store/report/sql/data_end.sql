-- Query: data_end (forecast input)
-- Parameters: $granularity VARCHAR, $range_start TIMESTAMPTZ, $range_end TIMESTAMPTZ (exclusive).
-- The end of the latest bucket the database holds for the period at the report's granularity.
SELECT max(timeframe_end) AS data_end FROM (
  SELECT timeframe_end FROM usage_program
  WHERE granularity = $granularity AND timeframe_start >= $range_start AND timeframe_start < $range_end
);

-- Query: dimension_counts — rows in the dimension tables, for status. Parameters: none.
SELECT (SELECT count(*) FROM programs) AS programs,
       (SELECT count(*) FROM frameworks) AS frameworks,
       (SELECT count(*) FROM snapshots) AS snapshots;

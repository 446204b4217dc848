-- Query: inventory_last_seen — when the inventory last listed any program (NULL: never), so the
-- collector refreshes it only on its own cadence. Parameters: none.
SELECT max(last_seen_at) AS last FROM programs;

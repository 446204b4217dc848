-- Query: public_transfer_top_frameworks — the ten frameworks that sent the most public traffic over
-- the last 7 complete days, in GB, with the framework's name from the inventory. Parameters: none.
SELECT f.framework_id,
       fw.name,
       f.program_id,
       round(sum(f.value) / 1e9, 3) AS public_gb
FROM usage_framework f
LEFT JOIN frameworks fw USING (framework_id)
WHERE f.granularity = 'daily'
  AND f.metric = 'public_network_transfer_bytes'
  AND f.timeframe_start >= date_trunc('day', now()) - INTERVAL 7 DAY
GROUP BY ALL
ORDER BY public_gb DESC
LIMIT 10;

-- Query: inventory_framework_count — how many frameworks the inventory knows for the given programs; the
-- collector bounds a frameworks request's page count by it. Parameters: $program_ids VARCHAR[].
SELECT count(*) AS n FROM frameworks WHERE program_id IN (SELECT unnest($program_ids::VARCHAR[]));

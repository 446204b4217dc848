-- Query: inventory_unnamed_frameworks
-- Parameters: $program_ids VARCHAR[]. Frameworks of these programs that consumption named and the
-- listing just made still does not: recorded as looked for, so they do not trigger another listing.
SELECT DISTINCT u.framework_id
FROM usage_framework u
LEFT JOIN frameworks f USING (framework_id)
WHERE u.program_id IN (SELECT unnest($program_ids)) AND f.framework_id IS NULL;

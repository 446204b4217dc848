-- Query: inventory_unknown_programs
-- Parameters: $run_id VARCHAR. Programs in this run's consumption that the inventory does not know and
-- no listing has looked for yet (a reason to read the programs listing before its age is reached).
SELECT DISTINCT u.program_id
FROM (SELECT program_id FROM usage_program WHERE run_id = $run_id
      UNION SELECT program_id FROM usage_framework WHERE run_id = $run_id) u
LEFT JOIN programs p USING (program_id)
LEFT JOIN inventory_sought s ON s.kind = 'program' AND s.id = u.program_id
WHERE p.program_id IS NULL AND s.id IS NULL
ORDER BY 1;

-- Query: program_labels (the names the workbook shows for programs)
-- Parameters: $range_end TIMESTAMPTZ (the period's end, exclusive). A program's inventory name,
-- flagged "(deleted)" when the inventory saw it go before the period ended (it is still billed for
-- the time it existed); a program without a name in the inventory is named by its id and flagged.
-- A program the inventory never listed is labelled by the report run (see run.ts).
SELECT program_id,
  CASE WHEN name IS NULL OR name = '' THEN program_id || ' (name not known)'
       ELSE name END
  || CASE WHEN deleted_at IS NOT NULL AND deleted_at < $range_end THEN ' (deleted)' ELSE '' END AS label
FROM programs;

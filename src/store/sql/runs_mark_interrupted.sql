-- Query: runs_mark_interrupted — at a writer's open no other writer can be running, so runs still
-- `running` were left by a process that ended (a crash, SIGKILL): they are marked `interrupted`.
-- Parameters: $now TIMESTAMPTZ.
UPDATE collection_runs
SET status = 'interrupted', finished_at = $now, error = coalesce(error, 'the process ended before the run finished')
WHERE status = 'running';

-- Query: staging_frameworks_create
-- Parameters: none. TEMP staging for one frameworks upsert (see staging_programs_create).
CREATE OR REPLACE TEMP TABLE staging_frameworks (
  seq           BIGINT  NOT NULL,
  framework_id  VARCHAR NOT NULL,
  program_id    VARCHAR NOT NULL,
  name          VARCHAR,
  current_state VARCHAR,
  created_at    TIMESTAMPTZ
);

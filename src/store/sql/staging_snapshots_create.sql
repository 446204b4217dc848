-- Query: staging_snapshots_create
-- Parameters: none. TEMP staging for one snapshots upsert (see staging_programs_create).
CREATE OR REPLACE TEMP TABLE staging_snapshots (
  seq                 BIGINT  NOT NULL,
  snapshot_id         VARCHAR NOT NULL,
  program_id          VARCHAR NOT NULL,
  name                VARCHAR,
  source_framework_id VARCHAR,
  created_at          TIMESTAMPTZ,
  manual              BOOLEAN,
  expires_at          TIMESTAMPTZ
);

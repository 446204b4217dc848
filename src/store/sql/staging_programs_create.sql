-- Query: staging_programs_create
-- Parameters: none. TEMP staging for one programs upsert; seq is the order rows were listed in, so
-- that an item listed twice (a repeated page) keeps its last version. Column order = append order.
CREATE OR REPLACE TEMP TABLE staging_programs (
  seq        BIGINT  NOT NULL,
  program_id VARCHAR NOT NULL,
  org_id     VARCHAR,
  name       VARCHAR,
  region_id  VARCHAR,
  created_at TIMESTAMPTZ
);

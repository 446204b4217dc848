-- Migration 006: the inventory's progress, so that a refresh commits as it goes, resumes after an
-- interruption and spends requests only where something changed or is unknown (ARCHITECTURE.md,
-- "Data path of collect"). Book-keeping only: the analysts' tables keep their columns.

-- The API's updated_at of each program as the latest programs listing gave it.
CREATE TABLE inventory_program_updated (
  program_id     VARCHAR PRIMARY KEY,
  api_updated_at TIMESTAMPTZ
);
COMMENT ON TABLE inventory_program_updated IS 'inventory book-keeping: each program''s updated_at as the latest programs listing gave it';

-- When a program's frameworks (kind 'frameworks') or snapshots (kind 'snapshots') were last listed and
-- committed, with the program's updated_at of that moment. Kept per kind, so a stop between a program's
-- two requests re-sends neither.
CREATE TABLE inventory_listing_state (
  program_id        VARCHAR NOT NULL,
  kind              VARCHAR NOT NULL,
  listed_at         TIMESTAMPTZ NOT NULL,
  listed_updated_at TIMESTAMPTZ,
  PRIMARY KEY (program_id, kind)
);
COMMENT ON TABLE inventory_listing_state IS 'inventory book-keeping: when each program''s frameworks and snapshots were last listed, and its updated_at then';

-- Ids that consumption named before the inventory knew them, and that a listing has looked for since:
-- a program or framework deleted before it was ever listed is looked for once, not on every run.
CREATE TABLE inventory_sought (
  kind      VARCHAR NOT NULL,   -- 'program' | 'framework'
  id        VARCHAR NOT NULL,
  sought_at TIMESTAMPTZ NOT NULL,
  PRIMARY KEY (kind, id)
);
COMMENT ON TABLE inventory_sought IS 'inventory book-keeping: ids seen in consumption that a listing has looked for (deleted before ever listed ones are not looked for again)';

-- Key/value progress of the paged programs listing: its cursor and start while it is under way, and when
-- it last completed.
CREATE TABLE inventory_state (
  key   VARCHAR PRIMARY KEY,
  value VARCHAR
);
COMMENT ON TABLE inventory_state IS 'inventory book-keeping: the programs listing''s cursor and start while under way, and when it last completed';

ALTER TABLE collection_runs ADD COLUMN inventory_requests BIGINT DEFAULT 0;
COMMENT ON COLUMN collection_runs.inventory_requests IS 'requests of the run spent on the inventory (programs, frameworks and snapshots listings)';

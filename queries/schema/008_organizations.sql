-- Migration 008: organization names.
-- The organizations the API key can list (GET /users/me/organizations: id and name), kept so that
-- reports can name a billing account (FOCUS BillingAccountName) rather than repeat its id. Rows are
-- never deleted; a name is updated when the listing shows a new one.
CREATE TABLE IF NOT EXISTS organizations (
  org_id       VARCHAR PRIMARY KEY,
  name         VARCHAR,
  last_seen_at TIMESTAMPTZ NOT NULL
);
COMMENT ON TABLE organizations IS 'Organizations the API key can list, with their names (the FOCUS BillingAccountName); never deleted.';
COMMENT ON COLUMN organizations.org_id IS 'organization id (org-...)';
COMMENT ON COLUMN organizations.name IS 'name as listed by the API; NULL when it gave none';
COMMENT ON COLUMN organizations.last_seen_at IS 'the last collection whose listing returned it';

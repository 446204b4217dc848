-- Migration 013: comments on what migration 012 created (DuckDB drops a COMMENT made in the
-- transaction that created its object, so they come in a migration of their own).
-- Parameters: none.
COMMENT ON TABLE alerts IS 'Spend alerts, each fired once: budget thresholds (ACTUAL month-to-date, FORECASTED month-end) and anomalies of a program''s day against its own baseline; reproducible from the stored usage and prices.';
COMMENT ON COLUMN alerts.alert_id IS 'al- and the first 16 hex digits of the sha256 of identity; the webhook''s idempotency key';
COMMENT ON COLUMN alerts.identity IS 'kind, scope, month, threshold, program and day: what makes an alert the same alert';
COMMENT ON COLUMN alerts.kind IS 'budget_actual | budget_forecast | anomaly | new_spend';
COMMENT ON COLUMN alerts.rule IS 'the rule that fired it (budget-threshold, anomaly-mad), with rule_version';
COMMENT ON COLUMN alerts.month IS 'billing month (first day, UTC)';
COMMENT ON COLUMN alerts.scope_kind IS 'organization | program | programs (a named set of the config) for budgets; program for anomalies';
COMMENT ON COLUMN alerts.scope_id IS 'organization id, program id or budget name';
COMMENT ON COLUMN alerts.threshold_pct IS 'budgets: the threshold, percent of the budget';
COMMENT ON COLUMN alerts.day IS 'anomalies: the day evaluated; ACTUAL budgets: the day month-to-date spend reached the threshold';
COMMENT ON COLUMN alerts.crossing_date IS 'FORECASTED budgets: the day the projection reaches the threshold';
COMMENT ON COLUMN alerts.expected_usd IS 'anomalies: the baseline (median of the previous complete days); FORECASTED budgets: the projection';
COMMENT ON COLUMN alerts.actual_usd IS 'anomalies: the day''s spend; budgets: month-to-date spend';
COMMENT ON COLUMN alerts.impact_usd IS 'anomalies: actual - expected, which the per-metric columns (compute_usd ... other_usd) add up to exactly';
COMMENT ON COLUMN alerts.impact_pct IS 'anomalies: impact as a percent of expected; NULL when expected is 0';
COMMENT ON COLUMN alerts.score IS 'anomalies: excess / (1.4826 x MAD), the spread floored at one cent';
COMMENT ON COLUMN alerts.detail IS 'JSON: the rule''s parameters and the inputs it was evaluated on';
COMMENT ON COLUMN alerts.status IS 'open | superseded (the data it rested on was restated and no longer supports it)';
COMMENT ON TABLE alert_deliveries IS 'Each webhook delivery attempt of an alert: outcome delivered or failed, the HTTP status, the error.';
COMMENT ON COLUMN alert_deliveries.target IS 'the webhook''s origin only (its path may hold a secret)';
COMMENT ON TABLE org_spending_limits IS 'Each organization''s spending limit as last read from the API (GET /organizations/{org_id}/billing/spending_limit, cents); answer limit | none (no limit, 403 or 404).';

-- Query: inventory_state_set
-- Parameters: $key VARCHAR, $value VARCHAR (NULL clears it).
INSERT INTO inventory_state (key, value) VALUES ($key, $value)
ON CONFLICT (key) DO UPDATE SET value = excluded.value;

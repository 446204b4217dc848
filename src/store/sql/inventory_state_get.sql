-- Query: inventory_state_get
-- Parameters: $key VARCHAR. One value of the inventory's progress (no row: not set).
SELECT value FROM inventory_state WHERE key = $key;

-- Query: inventory_sought_add
-- Parameters: $kind VARCHAR ('program' | 'framework'), $ids VARCHAR[], $at TIMESTAMPTZ.
INSERT INTO inventory_sought (kind, id, sought_at)
SELECT $kind, unnest($ids), $at
ON CONFLICT (kind, id) DO NOTHING;

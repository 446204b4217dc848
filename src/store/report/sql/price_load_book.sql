-- Query: price_load_book
-- Parameters: $revision VARCHAR, $currency VARCHAR, $sha256 VARCHAR, $path VARCHAR, $loaded_at TIMESTAMPTZ.
-- Run by refreshPrices inside the transaction that replaces the price tables (price_clear.sql).
INSERT INTO price_book VALUES ($revision, $currency, $sha256, $path, $loaded_at);

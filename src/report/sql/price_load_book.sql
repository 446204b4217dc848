-- Query: price_load_book
-- Parameters: $revision VARCHAR, $currency VARCHAR, $sha256 VARCHAR.
INSERT INTO price_book VALUES ($revision, $currency, $sha256);

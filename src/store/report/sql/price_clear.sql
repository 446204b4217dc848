-- Query: price_clear
-- Parameters: none. Empties the price tables before a new price book is loaded (same transaction).
DELETE FROM price_book;
DELETE FROM price_metrics;
DELETE FROM price_rates;
DELETE FROM price_allowances;

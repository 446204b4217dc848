-- Query: price_loaded
-- Parameters: none. The sha256 of the price book the price tables hold (no row = never loaded).
SELECT sha256 FROM price_book;

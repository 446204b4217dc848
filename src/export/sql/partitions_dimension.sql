-- Query: partitions_dimension (export --dataset)
-- Parameters: none; {{table}} is programs, frameworks or snapshots (quoted by quoteIdent). A
-- dimension is one unpartitioned file; inventory rows carry no run id.
SELECT count(*) AS n_rows,
       CAST(bit_xor(hash(t)) AS VARCHAR) || '-' || CAST(coalesce(sum(CAST(hash(t) AS HUGEINT)), 0) AS VARCHAR) AS digest,
       CAST([] AS VARCHAR[]) AS run_ids
FROM {{table}} t;

// The import rules of ARCHITECTURE.md ("What each folder may import"), checked by
// `npm run lint:deps`, the first step of `npm test`, so a forbidden import fails CI.
/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'Modules form a tree of layers; a cycle means two modules are one job split badly.',
      from: { path: '^src/' },
      to: { circular: true },
    },
    {
      name: 'domain-and-contract-are-leaves',
      severity: 'error',
      comment: 'domain/ (our vocabulary) and contract/ (the API as documented) import nothing of ours but domain/.',
      from: { path: '^src/(domain|contract)/' },
      to: { path: '^src/', pathNot: '^src/domain/' },
    },
    {
      name: 'client-and-sandbox-share-only-the-contract',
      severity: 'error',
      comment: 'The HTTP client and the sandbox both follow contract/; neither may read the other.',
      from: { path: '^src/api/' },
      to: { path: '^src/sandbox/' },
    },
    {
      name: 'sandbox-not-client',
      severity: 'error',
      comment: 'The sandbox serves the contract; it must not borrow the client or the page reader it is testing.',
      from: { path: '^src/sandbox/' },
      to: { path: '^src/(alerts|api|collect|page|store|report|billing|export|app|cli|schedule)/' },
    },
    {
      name: 'page-is-pure',
      severity: 'error',
      comment:
        'Reading a page is pure: page/ imports only contract/ and domain/ of ours, and lossless-json of npm ' +
        '(node builtins aside); never the store, DuckDB, the client or the collector. Whatever reads pages ' +
        'may import it: api/ for the one lossless test, store/ for the rows it stages.',
      from: { path: '^src/page/' },
      to: {
        path: '^src/|(^|/)node_modules/',
        pathNot: '^src/(page|contract|domain)/|(^|/)node_modules/lossless-json/',
      },
    },
    {
      name: 'data-layers-not-api',
      severity: 'error',
      comment: 'store/, billing/, report/, export/ and alerts/ see domain types, never the HTTP client.',
      from: { path: '^src/(store|billing|report|export|alerts)/' },
      to: { path: '^src/(api|collect|sandbox)/' },
    },
    {
      name: 'billing-is-pure',
      severity: 'error',
      comment: 'Price books are parsed and checked in memory; the SQL that applies them lives in store/report/.',
      from: { path: '^src/billing/' },
      to: { path: '^(src/(store|report|api|collect)/|node_modules/@duckdb/)' },
    },
    {
      name: 'config-is-low',
      severity: 'error',
      comment: 'Loading the configuration must not load report writers, the store or the client.',
      from: { path: '^src/config/' },
      to: { path: '^src/', pathNot: '^src/(config|domain|contract)/' },
    },
    {
      name: 'only-the-top-composes',
      severity: 'error',
      comment: 'app/ is the composition root: nothing below it imports app/, cli/ or schedule/.',
      from: {
        path: '^src/(alerts|api|billing|collect|config|contract|domain|export|report|sandbox|store)/|^src/(log|process)\\.ts$',
      },
      to: { path: '^src/(app|cli|schedule)/' },
    },
    {
      name: 'schedule-not-cli',
      severity: 'error',
      comment: 'The daemon and the CLI are siblings over app/.',
      from: { path: '^src/schedule/' },
      to: { path: '^src/cli/' },
    },
    {
      name: 'commands-go-through-app',
      severity: 'error',
      comment:
        'The CLI and the daemon run a collection, a report or an export through app/ (collectOnce, ' +
        'writeReport, exportDataset), never by wiring the client, the collector, the report runner or ' +
        'the dataset writer themselves (types are fine).',
      from: { path: '^src/(cli|schedule)/', pathNot: '^src/cli/main\\.ts$' },
      to: {
        path: '^src/(api/|collect/collect\\.ts$|report/run\\.ts$|export/dataset\\.ts$)',
        dependencyTypesNot: ['type-only'],
      },
    },
    {
      name: 'export-is-a-data-layer',
      severity: 'error',
      comment:
        'export/ is a data layer beside report/: it reads the store and reuses the file writers, but ' +
        'never the client, the collector, the report run or anything above it.',
      from: { path: '^src/export/' },
      to: { path: '^src/(api|collect|schedule|cli|app|sandbox)/|^src/report/run\\.ts$' },
    },
    {
      name: 'sql-stays-in-the-store',
      severity: 'error',
      comment:
        'Only src/store/ speaks SQL: nothing else in src/ imports DuckDB, the SQL helpers (store/sql.ts, ' +
        'store/connection.ts) or the raw SQL access (store/rawSql.ts); the report reads and writes through ' +
        "the typed topic objects of the Store (store.report). The analysts' query command (app/query.ts, the user's own SQL) " +
        "and the demo's example query (cli/demo.ts reads its file) are the exceptions.",
      from: { path: '^src/', pathNot: '^src/(store/|app/query\\.ts$|cli/demo\\.ts$)' },
      to: { path: '^src/store/(sql|connection|rawSql)\\.ts$|(^|/)node_modules/@duckdb/' },
    },
    {
      name: 'src-not-tests',
      severity: 'error',
      comment: 'Production code never imports the test kit.',
      from: { path: '^(src|bench)/' },
      to: { path: '^test/' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default'],
      extensions: ['.ts', '.js'],
    },
  },
};

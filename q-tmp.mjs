import { DuckDBInstance } from '@duckdb/node-api';
const i = await DuckDBInstance.create('/tmp/i16base/new/usage.analyst.duckdb', { access_mode: 'READ_ONLY' }); const c = await i.connect();
for (const q of process.argv.slice(2)) console.log((await c.runAndReadAll(q)).getRowsJson());

// The analysts' schema reference, generated from the migrations: a fresh in-memory database is
// migrated and its catalogue (tables, views, columns and their COMMENTs) written as Markdown.
import { openStore } from './store.js';
import { readSql } from './sql.js';

interface Row {
  kind: string;
  name: string;
  object_comment: string | null;
  column_name: string;
  data_type: string;
  is_nullable: boolean;
  column_comment: string | null;
}

export async function schemaReference(): Promise<string> {
  const store = await openStore({ path: ':memory:' });
  try {
    const version = await store.schemaVersion();
    const rows = await store.query<Row>(readSql('src/store/sql/schema_reference.sql'));
    const out = [
      '# Schema reference',
      '',
      `Generated from \`queries/schema/\` (schema version ${version}) by \`npm run docs:schema\`; do not edit by hand.`,
      'All times are TIMESTAMPTZ in UTC; `value` columns are exact BIGINT.',
    ];
    let current = '';
    for (const r of rows) {
      if (r.name !== current) {
        current = r.name;
        out.push('', `## ${r.name} (${r.kind})`, '');
        if (r.object_comment) out.push(r.object_comment, '');
        out.push('| column | type | null | meaning |', '|---|---|---|---|');
      }
      out.push(`| ${r.column_name} | ${r.data_type} | ${r.is_nullable ? 'yes' : 'no'} | ${(r.column_comment ?? '').replace(/\|/g, '\\|')} |`);
    }
    return out.join('\n') + '\n';
  } finally {
    await store.close();
  }
}

// The analysts' schema reference, generated from the migrations: a fresh in-memory database is
// migrated and its catalogue (tables, views, columns and their COMMENTs) written as Markdown.
import { openStore } from './store.js';
import { readSql } from './sql.js';
import { rawSql } from './rawSql.js';

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
    const rows = await rawSql(store).query<Row>(readSql('src/store/sql/schema_reference.sql'));
    const out = [
      '# Schema reference',
      '',
      `Generated from \`queries/schema/\` (schema version ${version}) by \`npm run docs:schema\`; do not edit by hand.`,
      'All times are TIMESTAMPTZ in UTC; `value` columns are exact BIGINT.',
      '',
      '## Names: the API and this schema',
      '',
      'The management API names some things as the underlying platform does (project, branch; fields such',
      'as `branch_ids`, `source_branch_id`, `project_slug`); the data is kept under these names:',
      '',
      '| API | this schema | ids |',
      '|---|---|---|',
      '| project, program (`program_id`) | program (`program_id`) | as the API gives them |',
      '| branch, framework (`framework_id`, `branch_ids` filter, `source_branch_id`) | framework (`framework_id`, `source_framework_id`) | `br-...` |',
      '| organization (`org_id`) | organization (`org_id`) | `org-...` |',
      '| consumption period (`period_id`, `period_plan`) | plan period (`period_id`, `period_plan`) | as the API gives them |',
      '| `timeframe_start` / `timeframe_end` of a bucket | the same | UTC, half-open |',
      '',
      "Metric names are the API's own (v2 `metrics[].metric_name`, v1 one field per metric); their units,",
      'divisors and display names are in `price_metrics`. Spend: `price_*` hold the price book',
      '(config/prices.toml, refreshed when its sha256 changes), `spend_*` are the very SQL the reports run',
      "(a month of `spend_month_program` equals that month's program_spend.parquet to the cent), and",
      '`queries/examples/` shows them in use. Never add granularities up: each holds the whole history.',
    ];
    let current = '';
    for (const r of rows) {
      if (r.name !== current) {
        current = r.name;
        out.push('', `## ${r.name} (${r.kind})`, '');
        if (r.object_comment) out.push(r.object_comment, '');
        out.push('| column | type | null | meaning |', '|---|---|---|---|');
      }
      out.push(
        `| ${r.column_name} | ${r.data_type} | ${r.is_nullable ? 'yes' : 'no'} | ${(r.column_comment ?? '').replace(/\|/g, '\\|')} |`,
      );
    }
    return out.join('\n') + '\n';
  } finally {
    await store.close();
  }
}

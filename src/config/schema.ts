// The configuration file's schema: every key, its default and what is allowed.
import { z } from 'zod';
import { GRANULARITIES, SOURCES } from '../domain/granularity.js';
import { OUTPUT_FORMATS } from '../domain/formats.js';

const positiveInt = z.number().int().positive();
/** A DuckDB memory_limit, such as "256MB" or "1GB". */
const memorySize = (fallback: string) =>
  z
    .string()
    .regex(/^\d+(\.\d+)?\s*(KB|MB|GB|KiB|MiB|GiB)$/i, 'expected a size such as "256MB" or "1GB"')
    .default(fallback);

export const configSchema = z
  .object({
    api: z
      .object({
        // No default: a collect without a base URL (here or USAGE_BASE_URL) is refused, never sent to a sandbox.
        base_url: z.url({ protocol: /^https?$/ }).optional(),
        timeout_ms: positiveInt.default(30_000),
        max_retries: z.number().int().min(0).max(20).default(6),
        // The longest wait a Retry-After may impose, anywhere (retries and the rate limiter).
        max_retry_after_seconds: z.number().min(0).max(3600).default(60),
        // A response body larger than this is refused, not buffered.
        max_body_mb: positiveInt.max(4096).default(256),
        concurrency: z.number().int().min(1).max(64).default(8),
        rate_limit: z
          .object({
            per_minute: positiveInt.max(100_000).default(700),
            per_second_per_route: positiveInt.max(10_000).default(40),
            headroom: z.number().min(0).max(0.5).default(0.03),
          })
          .strict()
          .prefault({}),
      })
      .strict()
      .prefault({}),
    collect: z
      .object({
        orgs: z.array(z.string().min(1)).default([]),
        granularities: z
          .array(z.enum(GRANULARITIES))
          .min(1)
          .default([...GRANULARITIES]),
        sources: z
          .array(z.enum(SOURCES))
          .min(1)
          .default([...SOURCES]),
        include_partial: z.boolean().default(false),
        // An answer that would delete more than this share of a window's stored rows is held (a failed
        // scope) unless collect --accept-deletions is given.
        max_deletion_share: z.number().min(0).max(1).default(0.5),
        // Pages one scope may take when the inventory does not know how many programs there are:
        // 1000 pages of 100 is 100,000 programs. With an inventory the bound follows its count.
        max_pages: positiveInt.default(1000),
        // DuckDB's working memory while collecting (in place of store.memory_limit): the staging of the
        // scopes being loaded spills to <db>.tmp/ beyond it. At 128MB every collect of the 10,000-program
        // benchmark stays under 512 MB of RSS; the store's limit (analysts' views, exports) is higher.
        memory_limit: memorySize('128MB'),
        settle: z
          .object({
            hourly_hours: z.number().int().min(0).max(168).default(6),
            daily_days: z.number().int().min(0).max(60).default(2),
            monthly_months: z.number().int().min(0).max(12).default(1),
          })
          .strict()
          .prefault({}),
      })
      .strict()
      .prefault({}),
    inventory: z
      .object({
        // The programs listing is re-read (and listings without an updated_at re-made) when older than this.
        // A week: on a large account the listing (one request per 400 programs) then costs far below 5% of
        // the daily runs' requests; new programs are named sooner, from consumption (GET /programs/{id}).
        max_age_hours: z.number().min(0).default(168),
        // Of one hour's requests at api.rate_limit.per_minute, the share one run may spend on the inventory.
        max_request_share: z.number().gt(0).max(1).default(0.5),
        // Of the run's consumption requests, the share that refreshing what the inventory already knows (the
        // programs listing when old, listings whose updated_at moved) may take per run; at least one request.
        refresh_share: z.number().min(0).max(1).default(0.04),
      })
      .strict()
      .prefault({}),
    store: z
      .object({
        db: z.string().min(1).default('data/usage.duckdb'),
        lock_timeout_seconds: z.number().min(0).default(120),
        // DuckDB's working memory for every command but collect and report (their own keys): the spend
        // views an analyst or an export reads ran out of memory at 128MB.
        memory_limit: memorySize('512MB'),
        // What `prune` may remove (default: keep everything). Hourly usage only: daily and monthly are
        // the billing record and are never pruned. At least 8 days, beyond the 168 hours the API serves,
        // so no later collect can rewrite a pruned day. With a dataset, only what it holds is removed.
        retention: z
          .object({
            hourly_days: z
              .number()
              .int()
              .min(8, 'must be at least 8 (the API serves hourly data for 168 hours)')
              .optional(),
            dataset: z.string().min(1).optional(),
          })
          .strict()
          .prefault({}),
      })
      .strict()
      .prefault({}),
    report: z
      .object({
        out_dir: z.string().min(1).default('reports'),
        formats: z.array(z.enum(OUTPUT_FORMATS)).min(1).default(['parquet', 'xlsx', 'html']),
        prices: z.string().min(1).default('config/prices.toml'),
        /** An operator's own partial price book laid over `prices` (rates replaced or added by key). */
        price_overlay: z.string().min(1).optional(),
        // DuckDB's working memory while a report runs (in place of store.memory_limit): the report's
        // tables spill to <db>.tmp/ beyond it. Every stage is per chunk of programs except the month's
        // spend_program_days, so 256MB runs the 10,000-program month (and test/report/tieout.test.ts's
        // month with many frameworks per program); the process peaks well above it (memory kept outside
        // DuckDB's limit: ARCHITECTURE.md, "Memory"), so a lower limit lowers the peak.
        memory_limit: memorySize('256MB'),
      })
      .strict()
      .prefault({}),
    status: z
      .object({
        /** `status --check`: a scope whose last complete collection is older than this is stale. */
        max_age_hours: z
          .object({
            hourly: z.number().positive().default(3),
            daily: z.number().positive().default(27),
            monthly: z.number().positive().default(27),
          })
          .strict()
          .prefault({}),
      })
      .strict()
      .prefault({}),
    schedule: z
      .object({
        timezone: z.string().min(1).default('UTC'),
        hourly_collect: z.string().min(1).default('7 * * * *'),
        daily_collect: z.string().min(1).default('23 3 * * *'),
        monthly_export: z.string().min(1).default('0 6 2 * *'),
        monthly_export_day: z.number().int().min(1).max(28).default(2),
      })
      .strict()
      .prefault({}),
    export: z
      .object({ /** The default of `export --dataset`. */ dataset: z.string().min(1).optional() })
      .strict()
      .prefault({}),
    metrics: z
      .object({
        /** A Prometheus textfile rewritten after every run (node_exporter's textfile collector). */ textfile: z
          .string()
          .min(1)
          .optional(),
      })
      .strict()
      .prefault({}),
    // Spend alerts (README, "Alerts"): every number of the anomaly rule, the organizations' default
    // budget (their spending limit from the API) and an optional webhook.
    alerts: z
      .object({
        enabled: z.boolean().default(true),
        // DuckDB's working memory while a collection evaluates the alerts (in place of collect.memory_limit):
        // the rules read in chunks, and a collection's memory is what keeps it lower than the collect's own.
        memory_limit: memorySize('64MB'),
        // https, or plain http to this machine's loopback only (the rule of the API base URL).
        webhook_url: z
          .url({ protocol: /^https?$/ })
          .refine(
            (u) => u.startsWith('https:') || /^http:\/\/(localhost|127(\.\d{1,3}){3}|\[::1\])(:\d+)?(\/|$)/i.test(u),
            {
              message: "the webhook must be https (plain http is allowed to this machine's loopback only)",
            },
          )
          .optional(),
        webhook_timeout_ms: positiveInt.max(120_000).default(10_000),
        // Attempts per alert and run (retried on a 5xx or a network error); a failed alert is tried again next run.
        webhook_max_attempts: z.number().int().min(1).max(10).default(3),
        // "spending_limit": an organization without a [[budgets]] entry is budgeted at its API spending limit.
        organization_budget: z.enum(['spending_limit', 'none']).default('spending_limit'),
        organization_thresholds_pct: z.array(z.number().positive().max(1000)).min(1).default([50, 80, 100]),
        anomaly: z
          .object({
            min_excess_usd: z
              .string()
              .regex(/^\d+(\.\d{1,2})?$/, 'a decimal amount such as "10" or "10.50"')
              .default('10'),
            min_ratio: z.number().min(1).default(1.5),
            min_score: z.number().min(0).default(4),
            baseline_days: z.number().int().min(1).max(90).default(28),
            min_baseline_days: z.number().int().min(1).max(90).default(14),
          })
          .strict()
          .prefault({}),
      })
      .strict()
      .prefault({}),
    // Budgets: a monthly amount for an organization (default: its spending limit), one program or a set.
    budgets: z
      .array(
        z
          .object({
            name: z.string().min(1),
            amount_usd: z
              .string()
              .regex(/^\d+(\.\d{1,2})?$/, 'a decimal amount such as "500" or "499.99"')
              .optional(),
            organization: z.string().min(1).optional(),
            programs: z.array(z.string().min(1)).min(1).optional(),
            thresholds_pct: z.array(z.number().positive().max(1000)).min(1).default([50, 80, 100]),
          })
          .strict()
          .refine((b) => (b.organization === undefined) !== (b.programs === undefined), {
            message: 'a budget names either organization or programs',
          })
          .refine((b) => b.amount_usd !== undefined || b.organization !== undefined, {
            message: 'a budget of programs needs amount_usd',
          }),
      )
      .default([]),
    log: z
      .object({ level: z.enum(['debug', 'info', 'warn', 'error']).default('info') })
      .strict()
      .prefault({}),
  })
  .strict();

export type Config = z.infer<typeof configSchema>;

/** Every default, from the schema: the one source that code outside the configuration (the client, the store) reads its defaults from. */
export const CONFIG_DEFAULTS: Config = configSchema.parse({});

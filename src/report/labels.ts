// Column headers for people: the workbook shows these, the Parquet and Arrow files keep the machine
// names (which the analysts' queries use). A column not listed here gets its name in words.

const LABELS: Record<string, string> = {
  line_no: 'Line',
  program_line_no: 'Program line',
  org_id: 'Organization',
  program_id: 'Program id',
  program_name: 'Program',
  api_version: 'API',
  billing_month: 'Month',
  period_id: 'Plan period',
  period_plan: 'Plan',
  period_start: 'Plan period start',
  period_end: 'Plan period end',
  metric: 'Metric',
  metric_name: 'Metric',
  raw_unit: 'API unit',
  billing_unit: 'Billing unit',
  aggregation: 'Aggregation',
  quantity_raw: 'Quantity in API units',
  quantity: 'Quantity',
  allowance: 'Included',
  allowance_raw: 'Included in API units',
  billable_quantity: 'Billable quantity',
  rate: 'Rate',
  rate_id: 'Rate id',
  cost: 'Cost',
  priced: 'Priced',
  note: 'Note',
  framework_id: 'Framework id',
  framework_name: 'Framework',
  line_type: 'Line type',
  attribution: 'Attribution',
  day: 'Day',
  usage_day: 'Day',
  gb_month: 'GB-month',
  quantity_gb: 'GB',
  allowance_gb: 'Included GB',
  billable_gb: 'Billable GB',
  snapshots: 'Snapshots',
  manual_snapshots: 'Manual snapshots',
  scheduled_snapshots: 'Scheduled snapshots',
  snapshots_known_from: 'Snapshots known from',
  granularity: 'Data granularity',
  lines: 'Lines',
  unpriced_lines: 'Unpriced lines',
  corrects_finalization: 'Corrects finalisation',
  line_key: 'Line key',
  change: 'Change',
  finalized_quantity_raw: 'Finalised quantity (API units)',
  current_quantity_raw: 'Current quantity (API units)',
  quantity_raw_change: 'Quantity change (API units)',
  finalized_cost: 'Finalised cost',
  current_cost: 'Current cost',
  cost_change: 'Cost change',
};

/** The header a person reads for a report column. */
export function columnLabel(name: string): string {
  const known = LABELS[name];
  if (known !== undefined) return known;
  const words = name.replace(/_/g, ' ');
  return words.charAt(0).toUpperCase() + words.slice(1);
}

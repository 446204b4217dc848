// The HTML report's Alerts section: the month's alerts (budgets and anomalies), each with its rule and
// numbers, so a reader of the charts sees what went wrong and when.
import type { AlertRecord } from '../store/alerts.js';

const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

export function alertsSection(alerts: readonly AlertRecord[]): string {
  const open = alerts.filter((a) => a.status === 'open').length;
  const rows = alerts.map(
    (a) =>
      `<tr class="${a.status}"><td>${esc(a.status)}</td><td>${esc(a.kind)}</td>` +
      `<td>${esc(a.day ?? a.crossing_date ?? '')}</td><td>${esc(a.program_name ?? a.program_id ?? a.org_name ?? a.scope_id)}</td>` +
      `<td class="num">${esc(a.actual_usd ?? '')}</td><td class="num">${esc(a.expected_usd ?? '')}</td><td class="num">${esc(a.impact_usd ?? a.threshold_usd ?? '')}</td>` +
      `<td>${esc(a.message)}</td></tr>`,
  );
  return `<section id="alerts"><h2>Alerts</h2>
<p>${alerts.length} alert(s) this month, ${open} open. Budgets: a threshold of month-to-date spend (ACTUAL) or of the month-end projection (FORECASTED, with the day it is crossed). Anomalies: a program's settled day against the median of its previous days (rule anomaly-mad). Superseded: the data it rested on was restated.</p>
${
  alerts.length === 0
    ? '<p>None.</p>'
    : `<table><thead><tr><th>Status</th><th>Kind</th><th>Day</th><th>Scope</th><th>Actual</th><th>Expected</th><th>Impact / threshold</th><th>What</th></tr></thead>
<tbody>${rows.join('\n')}</tbody></table>`
}
</section>`;
}

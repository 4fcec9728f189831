import type { TimesheetBank, TimesheetModel, TimesheetSection } from '../timesheet-model.ts';
import { formatterFor, type Formatter } from './format.ts';
import { labelsFor, type Labels } from './labels.ts';
import { ticketRows, type TicketRow } from './ticket-rows.ts';
import { escapeHtml } from '../../html.ts';
import { documentMoney } from '../../rates/money.ts';

/**
 * The printable A4 timesheet a client reads: self-contained (inline CSS, no script, no external
 * resource, so the pdf printer needs no network and the file reads the same offline in ten
 * years) and deterministic (the same model gives the same bytes, so checksums are stable).
 * Every text from the database is escaped: a ticket title is anyone's input.
 */
export function renderHtml(model: TimesheetModel): string {
  const f = formatterFor(model.client.locale);
  const l = labelsFor(f.locale);
  // amounts only on a document whose run was priced; an hours-only document renders as before issue 23
  const money: Money | null = model.currency ? (minor) => f.money(minor, model.currency!) : null;
  const title = `${l.title} ${model.number}`;
  const body = [
    header(model, f, l, money),
    ...(model.sections.length === 0 ? [`<p class="empty">${escapeHtml(l.noEntries)}</p>`] : model.sections.map((s) => section(s, f, l, money))),
    summary(model, f, l, money),
    ...(money && model.tax?.note ? [`<p class="tax-note">${escapeHtml(model.tax.note)}</p>`] : []),
  ].join('\n');
  return `<!DOCTYPE html>
<html lang="${escapeHtml(f.locale)}">
<head>
<meta charset="utf-8">
<title>${escapeHtml(title)}</title>
<style>${STYLE}</style>
</head>
<body>
${body}
</body>
</html>
`;
}

function header(model: TimesheetModel, f: Formatter, l: Labels, money: Money | null): string {
  const meta: [string, string][] = [
    [l.number, model.number],
    [l.version, String(model.version)],
    [l.issued, f.date(model.issuedOn)],
    [l.period, f.dateRange(model.period.start, model.period.end)],
    ...(money && model.dueOn ? [[l.dueDate, f.date(model.dueOn)] as [string, string]] : []),
  ];
  return `<header class="head">
<div class="parties">
<div class="party"><div class="label">${escapeHtml(l.agency)}</div><div class="name">${escapeHtml(model.agency.name)}</div></div>
<div class="party"><div class="label">${escapeHtml(l.client)}</div><div class="name">${escapeHtml(model.client.name)}</div></div>
</div>
<div class="doc">
<h1>${escapeHtml(l.title)}</h1>
<table class="meta">
${meta.map(([k, v]) => `<tr><th>${escapeHtml(k)}</th><td>${escapeHtml(v)}</td></tr>`).join('\n')}
</table>
</div>
</header>`;
}

/** Formats minor units in the document's currency. */
type Money = (minor: number) => string;

const amountCell = (money: Money | null, minor: number | undefined) => (money ? `<td class="num">${escapeHtml(money(minor ?? 0))}</td>` : '');

function section(s: TimesheetSection, f: Formatter, l: Labels, money: Money | null): string {
  const rows = ticketRows(s.lines, f.locale).map((r) => row(r, f, l, money));
  return `<section class="project">
<h2>${escapeHtml(l.project + l.colon + s.project.name)} <span class="key">${escapeHtml(s.project.key)}</span></h2>
<table class="lines">
<thead><tr><th>${escapeHtml(l.ticket)}</th><th>${escapeHtml(l.description)}</th><th>${escapeHtml(l.dates)}</th><th>${escapeHtml(l.people)}</th><th class="num">${escapeHtml(l.hours)}</th><th class="num">${escapeHtml(l.charged)}</th>${money ? `<th class="num">${escapeHtml(l.amount)}</th>` : ''}</tr></thead>
<tbody>
${rows.join('\n')}
<tr class="subtotal"><td colspan="4">${escapeHtml(l.subtotal)} ${escapeHtml(s.project.key)}</td><td class="num">${f.hours(s.totals.minutes)}</td><td class="num">${f.hours(s.totals.chargedMinutes)}</td>${amountCell(money, s.totals.amountMinor)}</tr>
</tbody>
</table>
</section>`;
}

function row(r: TicketRow, f: Formatter, l: Labels, money: Money | null): string {
  const tags: string[] = [];
  if (r.policy === 'free') tags.push(l.free);
  if (r.policy === 'bank') tags.push(r.bankName ? l.bank + l.colon + r.bankName : l.bank);
  if (r.correction) tags.push(l.correction);
  const classes = ['line', r.policy, ...(r.correction ? ['correction'] : [])].join(' ');
  return (
    `<tr class="${classes}"><td class="id">${escapeHtml(r.humanId)}</td>` +
    `<td class="text">${escapeHtml(r.text)}${tags.map((t) => ` <span class="tag">${escapeHtml(t)}</span>`).join('')}</td>` +
    `<td class="date">${escapeHtml(f.dateRange(r.firstDate, r.lastDate))}</td>` +
    `<td class="people">${escapeHtml(r.people.join(', '))}</td>` +
    `<td class="num">${f.hours(r.minutes)}</td><td class="num">${f.hours(r.chargedMinutes)}</td>${amountCell(money, r.amountMinor)}</tr>`
  );
}

function summary(model: TimesheetModel, f: Formatter, l: Labels, money: Money | null): string {
  return `<div class="summary">
${totals(model, f, l, money)}
${model.banks.length > 0 ? banks(model.banks, f, l) : ''}
</div>`;
}

function totals(model: TimesheetModel, f: Formatter, l: Labels, money: Money | null): string {
  const t = model.totals;
  const rows: [string, number, string][] = [
    [l.totalHours, t.minutes, ''],
    [l.freeHours, t.freeMinutes, ''],
    [l.bankHours, t.bankMinutes, ''],
    [l.chargedHours, t.chargedMinutes, ' class="grand"'],
  ];
  return `<section class="totals">
<h2>${escapeHtml(l.totals)}</h2>
<table>
${rows.map(([k, m, c]) => `<tr${c}><th>${escapeHtml(k)}</th><td class="num">${f.hours(m)}</td></tr>`).join('\n')}${
    money ? '\n' + moneyRows(model, l, money) : ''
  }
</table>
</section>`;
}

/** Subtotal, the tax line (when the client has a rate) and the total due: subtotal + tax, the tax rounded once on the subtotal. */
function moneyRows(model: TimesheetModel, l: Labels, money: Money): string {
  const bp = model.tax?.rateBasisPoints ?? 0;
  const m = documentMoney(model.totals.amountMinor ?? 0, bp);
  const rows: string[] = [];
  if (bp > 0) {
    rows.push(`<tr class="money"><th>${escapeHtml(l.subtotal)}</th><td class="num">${escapeHtml(money(m.subtotalMinor))}</td></tr>`);
    rows.push(`<tr class="tax"><th>${escapeHtml(model.tax?.label ?? l.tax)}</th><td class="num">${escapeHtml(money(m.taxMinor))}</td></tr>`);
  }
  rows.push(`<tr class="grand due"><th>${escapeHtml(l.totalDue)}</th><td class="num">${escapeHtml(money(m.totalDueMinor))}</td></tr>`);
  return rows.join('\n');
}

function banks(list: TimesheetBank[], f: Formatter, l: Labels): string {
  return `<section class="banks">
<h2>${escapeHtml(l.banks)}</h2>
<table>
<thead><tr><th>${escapeHtml(l.bankName)}</th><th class="num">${escapeHtml(l.balanceBefore)}</th><th class="num">${escapeHtml(l.drawn)}</th><th class="num">${escapeHtml(l.balanceAfter)}</th></tr></thead>
<tbody>
${list
  .map(
    (b) =>
      `<tr><td>${escapeHtml(b.name)}</td><td class="num">${f.hours(b.beforeMinutes)}</td><td class="num">${f.hours(b.drawnMinutes)}</td><td class="num">${f.hours(b.afterMinutes)}</td></tr>`,
  )
  .join('\n')}
</tbody>
</table>
</section>`;
}

// Fonts are the ones Debian's chromium has (DejaVu, Liberation): no web font, nothing fetched.
const STYLE = `
@page { size: A4; margin: 16mm 14mm 18mm; }
* { box-sizing: border-box; }
html { font-family: "DejaVu Sans", "Liberation Sans", Arial, Helvetica, sans-serif; font-size: 9pt; line-height: 1.35; color: #1a1a1a; }
body { margin: 0; }
@media screen { body { max-width: 210mm; margin: 0 auto; padding: 16mm 14mm; } }
h1 { font-size: 17pt; font-weight: 600; margin: 0 0 3mm; }
h2 { font-size: 10.5pt; font-weight: 600; margin: 7mm 0 2mm; break-after: avoid; }
table { border-collapse: collapse; width: 100%; }
th, td { text-align: left; vertical-align: top; }
thead { display: table-header-group; }
tr { break-inside: avoid; }
.num { text-align: right; white-space: nowrap; font-variant-numeric: tabular-nums; }
.head { display: flex; justify-content: space-between; align-items: flex-start; gap: 10mm; padding-bottom: 4mm; border-bottom: 0.8pt solid #333; }
.parties { display: flex; flex-direction: column; gap: 3mm; }
.label { font-size: 7.5pt; color: #555; text-transform: uppercase; letter-spacing: 0.04em; }
.name { font-size: 11pt; font-weight: 600; }
.meta { width: auto; }
.meta th { font-weight: normal; color: #555; padding: 0.4mm 4mm 0.4mm 0; }
.meta td { padding: 0.4mm 0; white-space: nowrap; }
.key { font-weight: normal; color: #555; }
.lines th, .lines td { padding: 1.4mm 1.8mm; border-bottom: 0.4pt solid #c8c8c8; }
.lines thead th { font-size: 7.5pt; font-weight: 600; color: #444; border-bottom: 0.8pt solid #333; }
.lines .id, .lines .date { white-space: nowrap; }
.lines .text { width: 38%; white-space: pre-line; }
.lines .people { width: 22%; }
.tag { display: inline-block; font-size: 7pt; line-height: 1.2; padding: 0.2mm 1.2mm; border: 0.5pt solid #777; border-radius: 1mm; white-space: nowrap; }
.free td, .bank td { color: #444; }
.correction td.num { color: #9b1c1c; }
.subtotal td { font-weight: 600; border-top: 0.8pt solid #333; border-bottom: none; }
.summary { display: flex; gap: 10mm; align-items: flex-start; break-inside: avoid; }
.totals { flex: 0 0 75mm; }
.banks { flex: 1 1 auto; }
.summary th, .summary td { padding: 1mm 1.8mm; border-bottom: 0.4pt solid #c8c8c8; }
.summary thead th { font-size: 7.5pt; font-weight: 600; color: #444; border-bottom: 0.8pt solid #333; }
.totals th { font-weight: normal; }
.totals .grand th, .totals .grand td { font-weight: 600; border-top: 0.8pt solid #333; border-bottom: none; }
.empty { margin: 8mm 0; color: #555; }
`;

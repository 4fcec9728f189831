import type { TimesheetBank, TimesheetModel, TimesheetSection } from '../timesheet-model.ts';
import { formatterFor, type Formatter } from './format.ts';
import { labelsFor, type Labels } from './labels.ts';
import { ticketRows, type TicketRow } from './ticket-rows.ts';
import { escapeHtml } from '../../html.ts';
import { documentMoney } from '../../rates/money.ts';
import { ibanGroups } from '../../workspaces/bank.ts';

/**
 * The printable A4 timesheet a client reads: self-contained (inline CSS, no script, no external
 * resource, so the pdf printer needs no network and the file reads the same offline in ten
 * years) and deterministic (the same model gives the same bytes, so checksums are stable).
 * Every text from the database is escaped: a ticket title is anyone's input.
 *
 * A document with any of issue 23's content (money, the parties' details, a PO number, per-entry
 * lines, a replaced number) is `rich`: it also has a viewport and a narrow-screen style (it reads
 * at 390 px: table rows stack, each cell naming its column). A document with none of it renders
 * byte for byte as before, so every document issued before stays reproducible.
 */
export function renderHtml(model: TimesheetModel): string {
  const f = formatterFor(model.client.locale);
  const l = labelsFor(f.locale);
  // amounts only on a document whose run was priced; an hours-only document renders as before issue 23
  const money: Money | null = model.currency ? (minor) => f.money(minor, model.currency!) : null;
  const r: Render = { f, l, money, rich: isRich(model) };
  const title = `${l.title} ${model.number}`;
  const sectionOf = (s: TimesheetSection) => (model.lineLayout === 'entry' ? entrySection(s, r) : section(s, r));
  const body = [
    header(model, f, l, money),
    ...(model.sections.length === 0 ? [`<p class="empty">${escapeHtml(l.noEntries)}</p>`] : model.sections.map(sectionOf)),
    summary(model, f, l, money),
    ...(money && model.tax?.note ? [`<p class="tax-note">${escapeHtml(model.tax.note)}</p>`] : []),
    ...payment(model, r),
  ].join('\n');
  return `<!DOCTYPE html>
<html lang="${escapeHtml(f.locale)}">
<head>
<meta charset="utf-8">
${r.rich ? '<meta name="viewport" content="width=device-width, initial-scale=1">\n' : ''}<title>${escapeHtml(title)}</title>
<style>${STYLE}${r.rich ? RICH_STYLE : ''}</style>
</head>
<body>
${body}
</body>
</html>
`;
}

/** What every part of a document's body needs: the locale's formats and words, the money formatter, and whether the document is rich. */
interface Render {
  f: Formatter;
  l: Labels;
  money: Money | null;
  rich: boolean;
}

/** Whether the model carries anything of issue 23 (see renderHtml). */
function isRich(m: TimesheetModel): boolean {
  const { agency: a, client: c } = m;
  return Boolean(
    m.currency ||
    a.legalName ||
    a.address ||
    a.taxId ||
    a.logo ||
    c.billingAddress ||
    c.taxId ||
    m.bank ||
    m.poNumber ||
    m.replacesNumber ||
    m.lineLayout === 'entry',
  );
}

function header(model: TimesheetModel, f: Formatter, l: Labels, money: Money | null): string {
  const meta: [string, string][] = [
    [l.number, model.number],
    [l.version, String(model.version)],
    [l.issued, f.date(model.issuedOn)],
    [l.period, f.dateRange(model.period.start, model.period.end)],
    ...(model.poNumber ? [[l.poNumber, model.poNumber] as [string, string]] : []),
    ...(money && model.dueOn ? [[l.dueDate, f.date(model.dueOn)] as [string, string]] : []),
  ];
  const { agency: a, client: c } = model;
  const logo = a.logo ? `<img class="logo" src="data:${a.logo.contentType};base64,${a.logo.base64}" alt="">` : '';
  return `<header class="head">
<div class="parties">
<div class="party">${logo}<div class="label">${escapeHtml(l.agency)}</div><div class="name">${escapeHtml(a.legalName ?? a.name)}</div>${partyDetails(a.address, a.taxId, l)}</div>
<div class="party"><div class="label">${escapeHtml(l.client)}</div><div class="name">${escapeHtml(c.name)}</div>${partyDetails(c.billingAddress, c.taxId, l)}</div>
</div>
<div class="doc">
<h1>${escapeHtml(l.title)}</h1>${model.replacesNumber ? `\n<p class="replaces">${escapeHtml(`${l.replaces} ${model.replacesNumber}`)}</p>` : ''}
<table class="meta">
${meta.map(([k, v]) => `<tr><th>${escapeHtml(k)}</th><td>${escapeHtml(v)}</td></tr>`).join('\n')}
</table>
</div>
</header>`;
}

/** A party's address (its lines kept) and tax id, under its name; nothing when it has neither. */
function partyDetails(address: string | undefined, taxId: string | undefined, l: Labels): string {
  return (
    (address ? `<div class="address">${escapeHtml(address)}</div>` : '') + (taxId ? `<div class="taxid">${escapeHtml(l.taxId + l.colon + taxId)}</div>` : '')
  );
}

/** Formats minor units in the document's currency. */
type Money = (minor: number) => string;

const cell = (cls: string, content: string) => `<td class="${cls}">${content}</td>`;

/**
 * The amount a row charges; for free and bank time (charged at zero) also what it would have cost
 * at its rate, so the client sees what the agency gave or the bank covered.
 */
function amountCell(r: Render, minor: number | undefined, worthMinor?: number): string {
  if (!r.money) return '';
  const worth = worthMinor ? `<span class="worth">${escapeHtml(`${r.l.worth} ${r.money(worthMinor)}`)}</span>` : '';
  return cell('num', escapeHtml(r.money(minor ?? 0)) + worth);
}

function section(s: TimesheetSection, r: Render): string {
  const { f, l, money } = r;
  const rows = ticketRows(s.lines, f.locale).map((t) => row(t, r));
  return `<section class="project">
<h2>${escapeHtml(l.project + l.colon + s.project.name)} <span class="key">${escapeHtml(s.project.key)}</span></h2>
<table class="lines">
<thead><tr><th>${escapeHtml(l.ticket)}</th><th>${escapeHtml(l.description)}</th><th>${escapeHtml(l.dates)}</th><th>${escapeHtml(l.people)}</th><th class="num">${escapeHtml(l.hours)}</th><th class="num">${escapeHtml(l.charged)}</th>${money ? `<th class="num">${escapeHtml(l.amount)}</th>` : ''}</tr></thead>
<tbody>
${rows.join('\n')}
<tr class="subtotal"><td colspan="4">${escapeHtml(l.subtotal)} ${escapeHtml(s.project.key)}</td>${cell('num', f.hours(s.totals.minutes))}${cell('num', f.hours(s.totals.chargedMinutes))}${amountCell(r, s.totals.amountMinor)}</tr>
</tbody>
</table>
</section>`;
}

/** The tags after a line's text: free, the bank drawn on, correction. */
function tagsOf(line: { policy: string; bankName: string | null; correction: boolean }, l: Labels): string {
  const tags: string[] = [];
  if (line.policy === 'free') tags.push(l.free);
  if (line.policy === 'bank') tags.push(line.bankName ? l.bank + l.colon + line.bankName : l.bank);
  if (line.correction) tags.push(l.correction);
  return tags.map((t) => ` <span class="tag">${escapeHtml(t)}</span>`).join('');
}

function row(t: TicketRow, r: Render): string {
  const { f, l } = r;
  const classes = ['line', t.policy, ...(t.correction ? ['correction'] : [])].join(' ');
  return (
    `<tr class="${classes}">${cell('id', escapeHtml(t.humanId))}` +
    cell('text', escapeHtml(t.text) + tagsOf(t, l)) +
    cell('date', escapeHtml(f.dateRange(t.firstDate, t.lastDate))) +
    cell('people', escapeHtml(t.people.join(', '))) +
    `${cell('num', f.hours(t.minutes))}${cell('num', f.hours(t.chargedMinutes))}${amountCell(r, t.amountMinor, t.policy === 'paid' ? 0 : t.listAmountMinor)}</tr>`
  );
}

/**
 * A section with a row per time entry (the client's `timesheetLines: entry`): date, ticket, the
 * ticket's text for the client, person, hours and, on a priced document, the rate the line was
 * billed at and its amount. The entry's own note is staff-only (the contract) and never printed.
 */
function entrySection(s: TimesheetSection, r: Render): string {
  const { f, l, money } = r;
  const rows = s.lines.map((line) => {
    const classes = ['line', line.policy, ...(line.correction ? ['correction'] : [])].join(' ');
    const rate = money ? cell('num', line.rateMinor === null || line.rateMinor === undefined ? '–' : escapeHtml(money(line.rateMinor))) : '';
    return (
      `<tr class="${classes}">${cell('date', escapeHtml(f.date(line.spentOn)))}${cell('id', escapeHtml(line.humanId))}` +
      cell('text', escapeHtml(line.text) + tagsOf(line, l)) +
      `${cell('people', escapeHtml(line.person))}${cell('num', f.hours(line.minutes))}${rate}` +
      `${amountCell(r, line.amountMinor ?? 0, line.policy === 'paid' ? 0 : (line.listAmountMinor ?? 0))}</tr>`
    );
  });
  return `<section class="project">
<h2>${escapeHtml(l.project + l.colon + s.project.name)} <span class="key">${escapeHtml(s.project.key)}</span></h2>
<table class="lines entries">
<thead><tr><th>${escapeHtml(l.date)}</th><th>${escapeHtml(l.ticket)}</th><th>${escapeHtml(l.description)}</th><th>${escapeHtml(l.person)}</th><th class="num">${escapeHtml(l.hours)}</th>${money ? `<th class="num">${escapeHtml(l.rate)}</th><th class="num">${escapeHtml(l.amount)}</th>` : ''}</tr></thead>
<tbody>
${rows.join('\n')}
<tr class="subtotal"><td colspan="4">${escapeHtml(l.subtotal)} ${escapeHtml(s.project.key)}</td>${cell('num', f.hours(s.totals.minutes))}${money ? '<td></td>' : ''}${amountCell(r, s.totals.amountMinor)}</tr>
</tbody>
</table>
</section>`;
}

/**
 * Under the totals: when to pay and where to (issue 23): the due date of a priced document and
 * the agency's bank details, when it has any. Nothing otherwise.
 */
function payment(model: TimesheetModel, r: Render): string[] {
  const { f, l, money } = r;
  const b = model.bank;
  const rows: [string, string][] = [
    ...(money && model.dueOn ? [[l.dueDate, f.date(model.dueOn)] as [string, string]] : []),
    ...(b?.accountHolder ? [[l.accountHolder, b.accountHolder] as [string, string]] : []),
    ...(b?.iban ? [[l.iban, ibanGroups(b.iban)] as [string, string]] : []),
    ...(b?.bic ? [[l.bic, b.bic] as [string, string]] : []),
  ];
  if (rows.length === 0 && !b?.details) return [];
  return [
    `<section class="payment">
<h2>${escapeHtml(l.payment)}</h2>
<table class="meta">
${rows.map(([k, v]) => `<tr><th>${escapeHtml(k)}</th><td>${escapeHtml(v)}</td></tr>`).join('\n')}
</table>${b?.details ? `\n<p class="bank-details">${escapeHtml(b.details)}</p>` : ''}
</section>`,
  ];
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
/**
 * Added to a rich document's style: the logo, addresses, the free-time worth, the payment block;
 * and below 640 px (a phone) the header and summary stack and the line tables keep to the width
 * (fixed layout, words wrap anywhere) so nothing scrolls sideways. Print (the pdf) is unaffected:
 * it is A4, and its table headers repeat on every page (`thead` is a table-header-group).
 */
const RICH_STYLE = `.logo { display: block; max-width: 60mm; max-height: 18mm; margin-bottom: 2mm; }
.address { white-space: pre-line; }
.taxid { color: #444; }
.replaces { margin: 0 0 2mm; font-weight: 600; }
.worth { display: block; font-size: 7pt; color: #555; }
.payment { break-inside: avoid; }
.payment .meta td { white-space: normal; }
.bank-details { white-space: pre-line; margin: 1mm 0; }
@media screen and (max-width: 640px) {
  body { padding: 4mm 3mm; overflow-wrap: anywhere; }
  .head, .summary { flex-direction: column; gap: 4mm; }
  .totals { flex: none; width: 100%; }
  .meta td, .num, .lines .id, .lines .date, .tag { white-space: normal; }
  .lines { table-layout: fixed; font-size: 7.5pt; }
  .lines th, .lines td { padding: 1mm 0.6mm; }
  .lines thead th { font-size: 6.5pt; }
}
`;

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

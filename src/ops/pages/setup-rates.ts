import { listClients } from '../../core/clients/list.ts';
import type { OperationInput } from '../../core/operation.ts';
import { runOp } from '../../core/operation.ts';
import { listProjects } from '../../core/projects/list.ts';
import { listRates } from '../../core/rates/list.ts';
import { decimalToMinor, minorToDecimal } from '../../core/rates/money.ts';
import { replaceRates } from '../../core/rates/replace.ts';
import type { Rate } from '../../core/rates/schema.ts';
import { listCategories } from '../../core/time/categories.ts';
import { defineAction, withMessage, type OpsRequest, type OpsRoute } from '../route.ts';
import { html, type Html } from '../html.ts';
import { formHead, given, options, setupPage, stackedTable, ticked } from './setup-common.ts';

const BACK = '/ops/setup/rates';
/** Blank rows the table offers for new rates. */
const BLANK_ROWS = 2;

type RateRows = OperationInput<typeof replaceRates>['rates'];

/** Past, current or future: which rate of its category, scope and currency applies today. */
function whenOf(rates: Rate[], today: string): Map<string, 'current' | 'future' | 'superseded'> {
  const out = new Map<string, 'current' | 'future' | 'superseded'>();
  const latest = new Map<string, Rate>();
  for (const r of rates) {
    if (r.effectiveFrom > today) {
      out.set(r.id, 'future');
      continue;
    }
    out.set(r.id, 'superseded');
    const key = [r.categoryId, r.clientId, r.projectId, r.currency].join('|');
    const seen = latest.get(key);
    if (!seen || seen.effectiveFrom < r.effectiveFrom) latest.set(key, r);
  }
  for (const r of latest.values()) out.set(r.id, 'current');
  return out;
}

/** The scope select's value: '' (the workspace default), `client:<id>` or `project:<id>`. */
const scopeOf = (r: { clientId: string | null; projectId: string | null }) =>
  r.projectId ? `project:${r.projectId}` : r.clientId ? `client:${r.clientId}` : '';

const FIELD_LABELS: Record<string, string> = {
  categoryId: 'category',
  clientId: 'scope (client)',
  projectId: 'scope',
  currency: 'currency',
  hourlyRateMinor: 'hourly rate',
  effectiveFrom: 'effective from',
};

/**
 * A refusal of the rate table in the operator's words: the operation counts the rows it got from
 * 0 (`rates.2.currency`, "Rates 0 and 2"); the page numbers the rows sent from 1.
 */
export function readableError(err: string | undefined): string | undefined {
  if (!err) return err;
  const field = /^rates\.(\d+)\.(\w+): (.*)$/.exec(err);
  if (field) {
    const message = /received NaN/.test(field[3]!) ? 'not an amount (digits, at most the currency’s decimals, e.g. 95.50)' : field[3]!;
    return `Rate ${Number(field[1]) + 1}, ${FIELD_LABELS[field[2]!] ?? field[2]}: ${message}`;
  }
  return err
    .replace(/\bRates (\d+) and (\d+)\b/, (_m, a, b) => `Rates ${Number(a) + 1} and ${Number(b) + 1}`)
    .replace(/\bRate (\d+)\b/, (_m, a) => `Rate ${Number(a) + 1}`);
}

async function ratesPage(r: OpsRequest) {
  const [{ rates }, { categories }, { clients }, { projects }] = await Promise.all([
    runOp(listRates, r.ctx, {}),
    runOp(listCategories, r.ctx, {}),
    runOp(listClients, r.ctx, { archived: 'all' }),
    runOp(listProjects, r.ctx, { archived: 'all' }),
  ]);
  const today = r.ctx.now().toISOString().slice(0, 10);
  const when = whenOf(rates, today);
  const categoryChoices = [['', 'choose…'] as const, ...categories.map((c) => [c.id, c.name] as const)];
  const scopeChoices = [
    ['', 'Workspace default'] as const,
    ...clients.map((c) => [`client:${c.id}`, `Client ${c.code} (${c.name})`] as const),
    ...projects.map((p) => [`project:${p.id}`, `Project ${p.key} (${p.name})`] as const),
  ];
  const slots: (Rate | null)[] = [...rates, ...Array.from({ length: BLANK_ROWS }, () => null)];
  const rows = slots.map((rate, i): Html[] => {
    const n = i + 1;
    return [
      html`${String(n)}`,
      html`<select name="categoryId_${i}" aria-label="Category of rate ${n}">
        ${options(categoryChoices, rate?.categoryId)}
      </select>`,
      html`<select name="scope_${i}" aria-label="Scope of rate ${n}">
        ${options(scopeChoices, rate ? scopeOf(rate) : '')}
      </select>`,
      html`<input name="currency_${i}" aria-label="Currency of rate ${n}" value="${rate?.currency ?? ''}" size="4" maxlength="3" autocomplete="off" />`,
      html`<input
        name="hourly_${i}"
        aria-label="Hourly rate of rate ${n}"
        inputmode="decimal"
        size="9"
        autocomplete="off"
        value="${rate ? minorToDecimal(rate.hourlyRateMinor, rate.currency) : ''}"
      />`,
      html`<input name="from_${i}" type="date" aria-label="Effective from, rate ${n}" value="${rate?.effectiveFrom ?? ''}" />`,
      rate ? html`${when.get(rate.id) ?? ''}` : html`<span class="muted">new</span>`,
      rate ? html`<input type="checkbox" name="remove_${i}" aria-label="Remove rate ${n}" />` : html``,
    ];
  });
  const shown = { ...r, query: { ...r.query, ...(r.query.err ? { err: readableError(r.query.err)! } : {}) } };
  return setupPage(
    shown,
    'rates',
    'Rates',
    html`<p>
        Hourly rates per consultant category, in a currency, from a date. A run bills each entry at the rate in effect on its day, in its client’s currency: a
        project’s rate wins over its client’s, which wins over the workspace default. A rate applies until the next one of the same category, scope and
        currency; a run keeps the rates it billed, so a change here alters no document already made.
      </p>
      <p>Fill a blank row to add a rate; change a row to replace it; tick “remove” to drop one. Saving replaces the whole table.</p>
      <form method="post" action="/ops/setup/rates">
        ${formHead(r, BACK)}<input type="hidden" name="count" value="${String(slots.length)}" />
        ${stackedTable(
          'Rates by category, scope, currency and date',
          ['Rate', 'Category', 'Scope', 'Currency', 'Per hour', 'From', 'Applies', 'Remove'],
          rows,
          '',
        )}
        <button type="submit">Save rates</button>
      </form>`,
  );
}

/** The table's rows (`categoryId_0`, …): blank rows and those ticked "remove" are left out; the rest go to the operation as typed. */
export function ratesSent(b: Record<string, string>): RateRows {
  const count = Math.min(Number(b.count) || 0, 5000);
  const out: RateRows = [];
  for (let i = 0; i < count; i++) {
    const hourly = given(b[`hourly_${i}`]);
    const from = given(b[`from_${i}`]);
    const categoryId = given(b[`categoryId_${i}`]);
    if (ticked(b[`remove_${i}`]) || (!hourly && !from && !categoryId)) continue;
    const scope = b[`scope_${i}`] ?? '';
    const currency = (b[`currency_${i}`] ?? '').trim();
    out.push({
      categoryId: categoryId ?? '',
      clientId: scope.startsWith('client:') ? scope.slice(7) : null,
      projectId: scope.startsWith('project:') ? scope.slice(8) : null,
      currency,
      hourlyRateMinor: decimalToMinor(hourly ?? '', currency),
      effectiveFrom: from ?? '',
    });
  }
  return out;
}

export const setupRatePages: OpsRoute[] = [
  { method: 'GET', path: '/setup/rates', page: ratesPage },
  defineAction({
    method: 'POST',
    path: '/setup/rates',
    op: replaceRates,
    sent: (r) => ({ rates: ratesSent(r.body) }),
    answer: (res) => ({ redirect: withMessage(BACK, 'msg', `${res.rates.length} rate(s) saved.`) }),
  }),
];

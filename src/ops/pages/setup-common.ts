import type { OpsRequest } from '../route.ts';
import { html, type Html } from '../html.ts';
import { layout, table } from '../layout.ts';

/**
 * What the Setup pages (issue 22) share: the page shell with the Setup sub-navigation, the console's
 * table with rows given as cells, and the small form pieces. Every read and write is an operation of the core.
 */

const PARTS = [
  ['people', 'People'],
  ['clients', 'Clients'],
  ['projects', 'Projects'],
  ['categories', 'Categories'],
  ['rates', 'Rates'],
  ['periods', 'Periods'],
  ['workflow', 'Workflow'],
  ['settings', 'Settings'],
] as const;

/** A Setup page: the console's shell, section `setup`, with the parts of Setup as a second navigation. */
export function setupPage(r: OpsRequest, part: string, title: string, body: Html) {
  const sub = html`<nav aria-label="Setup" class="subnav">
    <ul>
      ${PARTS.map(([k, label]) => html`<li><a href="/ops/setup/${k}" ${part === k ? html`aria-current="page"` : ''}>${label}</a></li>`)}
    </ul>
  </nav>`;
  return {
    page: layout({ title, principal: r.principal, csrf: r.csrf, section: 'setup', notice: r.query.msg, error: r.query.err }, html`${sub}${body}`),
  };
}

/** The console's table (layout.ts `table`: rows stack on a narrow screen, each cell named by its column), each row given as its cells. */
export function stackedTable(caption: string, head: string[], rows: Html[][], empty: string): Html {
  return table(
    caption,
    head,
    rows.map(
      (cells) =>
        html`<tr>
          ${cells.map((c) => html`<td>${c}</td>`)}
        </tr>`,
    ),
    empty,
  );
}

/** The hidden fields every Setup form carries: the CSRF token and the page to come back to with an error. */
export const formHead = (r: OpsRequest, back: string) =>
  html`<input type="hidden" name="_csrf" value="${r.csrf}" /><input type="hidden" name="_back" value="${back}" />`;

/** A one-button form posting `fields` (a row's action: resend, revoke, remove). */
export function rowButton(r: OpsRequest, action: string, back: string, label: string, fields: Record<string, string>, cls = ''): Html {
  return html`<form method="post" action="${action}" class="inline">
    ${formHead(r, back)} ${Object.entries(fields).map(([k, v]) => html`<input type="hidden" name="${k}" value="${v}" />`)}
    <button type="submit" class="${cls}">${label}</button>
  </form>`;
}

/** A `<select>`'s options, `selected` marked. */
export const options = (choices: readonly (readonly [string, string])[], selected: string | null | undefined): Html[] =>
  choices.map(([v, label]) => html`<option value="${v}" ${v === (selected ?? '') ? html`selected` : ''}>${label}</option>`);

/** A form's text field: '' is "not given". */
export const given = (v: string | undefined): string | undefined => (v === undefined || v.trim() === '' ? undefined : v);

/** A form's optional id field: '' is null. */
export const idOrNull = (v: string | undefined): string | null => (v && v.trim() ? v.trim() : null);

/** A checkbox: present when ticked. */
export const ticked = (v: string | undefined): boolean => v === 'on' || v === 'true';

/** A weekly target typed in hours ('' is none), as the operations' minutes; what is not a number stays NaN for the operation to refuse. */
export const hoursAsMinutes = (v: string | undefined): number | null => (v === undefined || v.trim() === '' ? null : Math.round(Number(v.trim()) * 60));

/** Minutes as the hours a weekly-target field shows ('' for none). */
export const minutesAsHours = (m: number | null): string => (m === null ? '' : String(Math.round((m / 60) * 100) / 100));

import type { Principal } from '../core/auth/principal.ts';
import { escapeHtml, html, Html } from './html.ts';

export interface PageOptions {
  title: string;
  principal?: Principal | null;
  csrf?: string;
  /** The nav entry of this page. */
  section?: string;
  /** Refresh the main content every few seconds while the tab is visible. */
  live?: boolean;
  notice?: string | null;
  error?: string | null;
}

const SECTIONS = [
  ['jobs', 'Jobs'],
  ['billing', 'Billing'],
  ['mail', 'Mail'],
  ['outbox', 'Outbox'],
  ['audit', 'Audit'],
  ['operators', 'Operators'],
  ['setup', 'Setup'],
] as const;

/** Setup (issue 22) is for Owners and Admins only: its every page reads what only they may. */
const shown = (p: Principal, section: string) => section !== 'setup' || p.role === 'owner' || p.role === 'admin';

/** The page shell: skip link, navigation, who is signed in, notices, and the page's content. */
export function layout(o: PageOptions, body: Html): string {
  const p = o.principal;
  const nav = p
    ? html`<nav aria-label="Console">
        <ul>
          ${SECTIONS.filter(([k]) => shown(p, k)).map(([k, label]) => html`<li><a href="/ops/${k}" ${o.section === k ? html`aria-current="page"` : ''}>${label}</a></li>`)}
        </ul>
      </nav>`
    : '';
  const who = p
    ? html`<p class="who">${p.name} · ${p.slug} · ${p.role}${p.flags?.has('billingOperator') ? ' (billing operator)' : ''}
        <form method="post" action="/ops/logout" class="inline"><input type="hidden" name="_csrf" value="${o.csrf ?? ''}"><button type="submit" class="link">Sign out</button></form></p>`
    : '';
  return html`<!doctype html>
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        ${o.csrf ? html`<meta name="csrf-token" content="${o.csrf}" />` : ''}
        <title>${o.title} · Operations console</title>
        <link rel="stylesheet" href="/ops/static/ops.css" />
        <script src="/ops/static/ops.js" defer></script>
      </head>
      <body>
        <a class="skip" href="#main">Skip to content</a>
        <header>
          <p class="brand"><a href="/ops">Operations console</a></p>
          ${nav}${who}
        </header>
        <main id="main" ${o.live ? html`data-live="5000"` : ''}>
          <h1>${o.title}</h1>
          ${o.notice ? html`<p class="notice" role="status">${o.notice}</p>` : ''} ${o.error ? html`<p class="error" role="alert">${o.error}</p>` : ''} ${body}
        </main>
      </body>
    </html>`.text;
}

/** A form that posts an action with the session's CSRF token. */
export function actionForm(action: string, csrf: string, label: string, fields: Record<string, string> = {}, cls = ''): Html {
  return html`<form method="post" action="${action}" class="inline">
    <input type="hidden" name="_csrf" value="${csrf}" />
    ${Object.entries(fields).map(([k, v]) => html`<input type="hidden" name="${k}" value="${v}" />`)}
    <button type="submit" class="${cls}">${label}</button>
  </form>`;
}

/** A column heading: a label, or `num(label)` for one right-aligned over a column of numbers. */
export type Head = string | { label: string; num: true };
export const num = (label: string): Head => ({ label, num: true });

/**
 * A table, or the sentence saying there is nothing to show. Below 48rem its rows stack (ops.css
 * `table.stacked`): every cell is given its column's name here, so no page labels its own cells.
 */
export function table(caption: string, head: Head[], rows: Html[], empty: string): Html {
  if (rows.length === 0) return html`<p class="empty">${empty}</p>`;
  const labels = head.map((h) => (typeof h === 'string' ? h : h.label));
  return html`<div class="scroll">
    <table class="stacked">
      <caption>
        ${caption}
      </caption>
      <thead>
        <tr>
          ${head.map((h) => (typeof h === 'string' ? html`<th scope="col">${h}</th>` : html`<th scope="col" class="num">${h.label}</th>`))}
        </tr>
      </thead>
      <tbody>
        ${rows.map((row) => labelCells(row, labels))}
      </tbody>
    </table>
  </div>`;
}

/**
 * A rendered row with `data-label` (its column's name, escaped) on each of its cells, which ops.css
 * shows beside the value on a narrow screen. A row is the pages' own `html` template: every `<td`
 * in its text is a tag (the template escapes values), and rows hold no nested table. A cell that
 * names its own label keeps it; `colspan` moves the count on.
 */
function labelCells(row: Html, labels: string[]): Html {
  let column = 0;
  const text = row.text.replace(/<td\b([^>]*)>/g, (tag, attributes: string) => {
    const label = labels[column] ?? '';
    column += Number(/\bcolspan="(\d+)"/.exec(attributes)?.[1] ?? 1);
    return /\bdata-label=/.test(attributes) ? tag : `<td data-label="${escapeHtml(label)}"${attributes}>`;
  });
  return new Html(text);
}

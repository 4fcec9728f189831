import { Html, html } from '../core/html.ts';

export { escapeHtml, Html, html } from '../core/html.ts';

/** A moment in the operator's timezone (set by the page script) with the UTC time on hover. */
export function when(d: Date | string | null | undefined): Html {
  if (!d) return html`<span class="muted">never</span>`;
  const iso = (typeof d === 'string' ? new Date(d) : d).toISOString();
  const utc = `${iso.slice(0, 19).replace('T', ' ')} UTC`;
  return html`<time datetime="${iso}" title="${utc}">${utc}</time>`;
}

/** A duration as people read it. */
export function ms(n: number | null | undefined): string {
  if (n === null || n === undefined) return '–';
  if (n < 1000) return `${n} ms`;
  if (n < 60_000) return `${(n / 1000).toFixed(1)} s`;
  return `${Math.round(n / 60_000)} min`;
}

/** Age of a moment relative to now, in words. */
export function age(d: Date | null, now: Date): string {
  if (!d) return '–';
  const s = Math.max(0, Math.round((now.getTime() - d.getTime()) / 1000));
  if (s < 120) return `${s} s`;
  if (s < 7200) return `${Math.round(s / 60)} min`;
  if (s < 172800) return `${Math.round(s / 3600)} h`;
  return `${Math.round(s / 86400)} d`;
}

/**
 * An identifier shown whole (an email address, a document number, a job key): a table column is
 * never narrower than it and it never wraps at its hyphens (ops.css `.token`).
 */
export const token = (s: string | null | undefined): Html => (s ? html`<span class="token">${s}</span>` : html``);

export const minutes = (m: number) => `${Math.floor(m / 60)}h ${String(m % 60).padStart(2, '0')}m`;

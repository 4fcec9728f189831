import { html, type Html } from '../html.ts';

/** A 24-bar inline SVG of attempts per hour over the last day (failures in red), with a text alternative. */
export function hourlyChart(task: string, hours: { hour: Date; finished: number; failed: number }[], now: Date): Html {
  const start = Math.floor(now.getTime() / 3_600_000) - 23;
  const bars = Array.from(
    { length: 24 },
    (_, i) => hours.find((h) => Math.floor(new Date(h.hour).getTime() / 3_600_000) === start + i) ?? { finished: 0, failed: 0 },
  );
  const max = Math.max(1, ...bars.map((b) => b.finished));
  const total = bars.reduce((n, b) => n + b.finished, 0);
  const failed = bars.reduce((n, b) => n + b.failed, 0);
  const h = (n: number) => Math.round((36 * n) / max);
  return html`<svg
    class="chart"
    viewBox="0 0 240 40"
    preserveAspectRatio="none"
    role="img"
    aria-label="${task}: ${total} attempts in the last 24 hours, ${failed} failed"
  >
    ${bars.map((b, i) => html`<rect x="${i * 10 + 1}" y="${40 - h(b.finished)}" width="8" height="${h(b.finished)}" fill="#0b5cad"></rect>${b.failed ? html`<rect x="${i * 10 + 1}" y="${40 - h(b.failed)}" width="8" height="${h(b.failed)}" fill="#a40000"></rect>` : ''}`)}
  </svg>`;
}

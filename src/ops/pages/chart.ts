import { html, type Html } from '../html.ts';

/** A chart's window as the page draws it: how many bars, each this long, and what the label calls it. */
export interface ChartWindow {
  bars: number;
  stepMs: number;
  label: string;
}

/**
 * A bar chart of attempts over a window ending now (failures in red over the total), one bar per
 * step, as an inline SVG with a text alternative. Bars start at multiples of the step since the
 * epoch (UTC), as the core's series buckets them.
 */
export function barChart(task: string, w: ChartWindow, points: { at: Date; finished: number; failed: number }[], now: Date): Html {
  const start = Math.floor(now.getTime() / w.stepMs) - (w.bars - 1);
  const bars = Array.from(
    { length: w.bars },
    (_, i) => points.find((p) => Math.floor(new Date(p.at).getTime() / w.stepMs) === start + i) ?? { finished: 0, failed: 0 },
  );
  const max = Math.max(1, ...bars.map((b) => b.finished));
  const total = bars.reduce((n, b) => n + b.finished, 0);
  const failed = bars.reduce((n, b) => n + b.failed, 0);
  const width = 240 / w.bars;
  const h = (n: number) => Math.round((36 * n) / max);
  const x = (i: number) => (i * width + width * 0.1).toFixed(2);
  const bw = (width * 0.8).toFixed(2);
  return html`<svg
    class="chart"
    viewBox="0 0 240 40"
    preserveAspectRatio="none"
    role="img"
    aria-label="${task}: ${total} attempts in the ${w.label}, ${failed} failed"
  >
    ${bars.map((b, i) => html`<rect x="${x(i)}" y="${40 - h(b.finished)}" width="${bw}" height="${h(b.finished)}" fill="#0b5cad"></rect>${b.failed ? html`<rect x="${x(i)}" y="${40 - h(b.failed)}" width="${bw}" height="${h(b.failed)}" fill="#a40000"></rect>` : ''}`)}
  </svg>`;
}

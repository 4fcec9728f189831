/** Milliseconds of an hour, a day and 7 days: the console's statistics windows. */
export const HOUR = 3_600_000;
export const DAY = 24 * HOUR;
export const WEEK = 7 * DAY;

/** The start of the UTC hour `t` (epoch ms) lies in: job_stats_hourly's hours (sql/094). */
export const floorHour = (t: number) => Math.floor(t / HOUR) * HOUR;

/** job_duration_bucket's base (sql/094): bucket b > 0 holds durations from 1.3^(b-1) up to 1.3^b ms. */
const BASE = 1.3;

/**
 * Finished and failed attempts and their durations by job_duration_bucket (sql/094). A percentile
 * is the geometric middle of the bucket the nearest rank falls in: within 14 % of the true value
 * (0 ms exactly; beyond about 3 hours only "at least").
 */
export class Histogram {
  finished = 0;
  failed = 0;
  private readonly counts = new Array<number>(64).fill(0);

  /** Adds attempts to the counts (their durations go in through `add`). */
  count(finished: number, failed: number): this {
    this.finished += finished;
    this.failed += failed;
    return this;
  }

  /** Adds `n` durations of one bucket. */
  add(bucket: number, n: number): this {
    this.counts[bucket] = (this.counts[bucket] ?? 0) + n;
    return this;
  }

  percentile(p: number): number | null {
    if (this.finished <= 0) return null;
    const rank = Math.max(1, Math.ceil(p * this.finished));
    let seen = 0;
    for (let b = 0; b < this.counts.length; b++) {
      seen += this.counts[b]!;
      if (seen >= rank) return b === 0 ? 0 : Math.round(BASE ** (b - 0.5));
    }
    return null;
  }
}

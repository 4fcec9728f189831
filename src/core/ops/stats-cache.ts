/** Attempts finished and failed of one task in one UTC hour. */
export type Hourly = { task: string; hour: Date; finished: number; failed: number };

/**
 * job_stats_hourly's whole UTC hours of the last 7 days before the current one, for a workspace
 * and the process: attempts per task and hour, and the duration buckets summed per task for the
 * last day's hours (`recent`) and the older ones (stats.ts `wholeHours`).
 */
export interface WholeHours {
  hours: Hourly[];
  buckets: { task: string; recent: boolean; b: number; n: number }[];
}

/**
 * The web process's copy of each workspace's whole hours of job statistics (stats.ts
 * `wholeHours`: job_stats_hourly's completed UTC hours of the last 7 days), for the hour it was
 * read in and at most `ttlMs` (a minute). The hour is part of the key, so a new hour reads
 * afresh; within the hour the completed hours' counters change only when an attempt that started
 * before the hour turned is written or completed later (the history's flush lag at the turn, an
 * attempt running across it) or rows are deleted. Such a change shows in the 24-hour and 7-day
 * figures and bars up to a minute late; the last hour and the partial hours at the windows' ends
 * are read afresh on every request. An operator watching trends over a day or a week loses
 * nothing by that minute; the console refreshes every 5 seconds, so without the copy each open
 * page re-reads a week of counters 12 times a minute.
 */
export class WholeHoursCache {
  private values = new Map<string, { value: Promise<WholeHours>; until: number }>();

  constructor(private readonly ttlMs = 60_000) {}

  get(key: string, load: () => Promise<WholeHours>, now = Date.now()): Promise<WholeHours> {
    const hit = this.values.get(key);
    if (hit && hit.until > now) return hit.value;
    // entries of past hours are never asked for again: drop every expired one here
    for (const [k, v] of this.values) if (v.until <= now) this.values.delete(k);
    const value = load();
    this.values.set(key, { value, until: now + this.ttlMs });
    value.catch(() => this.values.delete(key));
    return value;
  }
}

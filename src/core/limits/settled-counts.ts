import type { Db } from '../../db/connect.ts';
import { RATE_LIMIT_TABLE } from './store.ts';

/** One key's fixed window as this process sees it. */
interface Window {
  /** When the shared window ends (epoch ms: the row's `expire`); 0 until its first settle answers. */
  end: number;
  /** The shared count as of this process's last settle, every process's settled points included. */
  settled: number;
  /** Points on their way to PostgreSQL in the settle now running. */
  sending: number;
  /** Points counted here since. */
  pending: number;
  /** The window's first settle; requests that arrive meanwhile wait for it. */
  opening: Promise<void> | null;
}

export interface Taken {
  allowed: boolean;
  /** Points of the window used, as far as this process knows, this request's included when allowed. */
  consumed: number;
  msBeforeNext: number;
}

export interface SettleOptions {
  /** Length of a fixed window. */
  windowMs: number;
  /** How often the points counted here are added to the shared rows (and the shared counts learned back). */
  settleEveryMs: number;
  /** A background settle failed; its points are kept and sent with the next one. */
  onError?: (err: unknown) => void;
  now?: () => number;
}

interface Row {
  key: string;
  points: number;
  expire: number;
}

/**
 * Fixed-window counters shared by every process through the `rate_limits` table, counted in
 * process memory and settled in batches: a request is decided at once from the shared count
 * learned at the last settle plus the points this process counted since, and a timer adds those
 * points to the shared rows (one upsert for every key with points, `unnest`, once per interval)
 * and learns the new shared counts back. The first request of a window in this process settles
 * before it is answered, so a process that starts, or meets a token for the first time in a
 * window, knows the shared count.
 *
 * Slack: a process decides on a shared count up to one interval old, so a key can go past its
 * limit by what the other processes accept for it within one interval, and never by more than
 * (processes - 1) x limit (one process alone never passes it). Once a process learns the limit is
 * reached it refuses the key from memory until the window ends.
 *
 * rate-limiter-flexible has no such limiter: its stores settle every point (one statement per
 * consume), RateLimiterMemory is one process's count, `insuranceLimiter` only takes over when the
 * store fails, and BurstyRateLimiter and RateLimiterUnion combine limiters that each still write
 * per consume. The rows keep that library's shape and window rule, so both share the table.
 */
export class SettledCounts {
  private windows = new Map<string, Window>();
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;
  private stopped = false;
  private now: () => number;

  constructor(
    private sql: Db,
    private o: SettleOptions,
  ) {
    this.now = o.now ?? Date.now;
  }

  /** Takes one point of `key` unless `limit` points of its window are used already. */
  async take(key: string, limit: number): Promise<Taken> {
    let w = this.windows.get(key);
    if (w && !w.opening && w.end <= this.now()) {
      this.windows.delete(key); // the window is over; its unsettled points no longer matter
      w = undefined;
    }
    if (!w) return this.open(key, limit);
    if (w.opening) await w.opening;
    const used = w.settled + w.sending + w.pending;
    if (used >= limit) return { allowed: false, consumed: used, msBeforeNext: w.end - this.now() };
    w.pending += 1;
    this.schedule();
    return { allowed: true, consumed: used + 1, msBeforeNext: w.end - this.now() };
  }

  /** The first request of a window here: its point goes to PostgreSQL before it is answered. */
  private async open(key: string, limit: number): Promise<Taken> {
    const w: Window = { end: 0, settled: 0, sending: 1, pending: 0, opening: null };
    this.windows.set(key, w);
    w.opening = this.upsert([key], [1]).then(
      ([row]) => learn(w, row!),
      (err: unknown) => {
        if (this.windows.get(key) === w) this.windows.delete(key);
        throw err;
      },
    );
    try {
      await w.opening;
    } finally {
      w.opening = null;
    }
    // the shared count includes this request's point now
    return { allowed: w.settled <= limit, consumed: w.settled, msBeforeNext: w.end - this.now() };
  }

  private schedule() {
    if (this.timer || this.stopped) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      // after the settle still running, if any: a key is never sent twice at once
      const run: Promise<void> = Promise.resolve(this.running)
        .then(() => this.settleNow(false))
        .catch((err: unknown) => this.o.onError?.(err))
        .finally(() => {
          if (this.running === run) this.running = null;
          if ([...this.windows.values()].some((w) => w.pending > 0)) this.schedule();
        });
      this.running = run;
    }, this.o.settleEveryMs);
    this.timer.unref();
  }

  /**
   * Settles now, without waiting for the timer: the points counted here, and with `all` every
   * live key of this process even without new points (it learns the other processes' counts).
   */
  async settle(all = true): Promise<void> {
    await this.running;
    await this.settleNow(all);
  }

  /** Stops the timer and sends what was counted here (on shutdown, before the pool closes). */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.running;
    await this.settleNow(false).catch((err: unknown) => this.o.onError?.(err));
  }

  private async settleNow(all: boolean): Promise<void> {
    const now = this.now();
    const batch: [string, Window][] = [];
    for (const [key, w] of this.windows) {
      if (w.opening || w.sending) continue; // a settle of it is on its way
      if (w.end <= now) this.windows.delete(key);
      else if (w.pending > 0 || all) batch.push([key, w]);
    }
    if (batch.length === 0) return;
    for (const [, w] of batch) {
      w.sending = w.pending;
      w.pending = 0;
    }
    try {
      const rows = await this.upsert(
        batch.map(([key]) => key),
        batch.map(([, w]) => w.sending),
      );
      const byKey = new Map(rows.map((r) => [r.key, r]));
      for (const [key, w] of batch) learn(w, byKey.get(key)!);
    } catch (err) {
      for (const [, w] of batch) {
        w.pending += w.sending;
        w.sending = 0;
      }
      throw err;
    }
  }

  /**
   * Adds points to the shared rows and returns their counts: one statement for any number of
   * keys. A row whose window ended starts a new one with these points (rate-limiter-flexible's
   * rule). Keys go in sorted order, so two processes settling the same keys never deadlock.
   */
  private upsert(keys: string[], points: number[]): Promise<Row[]> {
    const now = this.now();
    return this.sql<Row[]>`
      insert into ${this.sql(RATE_LIMIT_TABLE)} as r (key, points, expire)
      select u.key, u.points, ${now + this.o.windowMs}::bigint
      from unnest(${keys}::text[], ${points}::int[]) as u(key, points)
      order by u.key
      on conflict (key) do update set
        points = case when r.expire <= ${now}::bigint then excluded.points else r.points + excluded.points end,
        expire = case when r.expire <= ${now}::bigint then excluded.expire else r.expire end
      returning r.key, r.points, r.expire::float8 as expire`;
  }
}

function learn(w: Window, row: Row) {
  w.settled = row.points;
  w.end = row.expire;
  w.sending = 0;
}

import { RateLimiterPostgres, RateLimiterRes } from 'rate-limiter-flexible';
import type { Db } from '../../db/connect.ts';

/** The table of sql/006_rate_limits.sql; every limiter of the service shares it, keys are prefixed. */
export const RATE_LIMIT_TABLE = 'rate_limits';

interface PgQuery {
  text: string;
  values?: unknown[];
}

/**
 * RateLimiterPostgres speaks node-postgres (`client.query({text, values}) -> {rows, rowCount}`);
 * this is that interface over postgres.js. The statements are the library's own constants; every
 * value is a bound parameter. postgres.js prepares each statement once per connection.
 */
function pgCompatibleClient(sql: Db) {
  return {
    query: async ({ text, values }: PgQuery) => {
      const rows = await sql.unsafe(text, (values ?? []) as never[], { prepare: true });
      return { rows, rowCount: rows.count };
    },
  };
}

export interface LimiterOptions {
  /** Distinguishes this limiter's keys in the shared table. */
  keyPrefix: string;
  points: number;
  durationSeconds: number;
}

/**
 * A fixed-window counter in PostgreSQL (one upsert per consume), shared by every process. The
 * table comes from a migration and is cleaned by a cron task, so the library neither creates it
 * nor runs its own timer. A key that went over its limit is then refused from process memory
 * until the window ends, so a client hammering a closed door costs no database statement.
 */
export function postgresLimiter(sql: Db, o: LimiterOptions): RateLimiterPostgres {
  return new RateLimiterPostgres({
    storeClient: pgCompatibleClient(sql),
    storeType: 'client',
    tableName: RATE_LIMIT_TABLE,
    tableCreated: true,
    clearExpiredByTimeout: false,
    keyPrefix: o.keyPrefix,
    points: o.points,
    duration: o.durationSeconds,
    inMemoryBlockOnConsumed: o.points + 1,
  });
}

/** The library rejects with a RateLimiterRes when a key is over its limit, and with an Error when the store fails. */
export const isLimitReached = (e: unknown): e is RateLimiterRes => e instanceof RateLimiterRes;

/** Whole seconds until a window ends, at least 1 (for Retry-After and RateLimit-Reset). */
export const secondsUntil = (ms: number) => Math.max(1, Math.ceil(ms / 1000));

/** The cron task `limits:cleanup` (with the idempotency keys'): rate-limit counters whose window ended. */
export async function deleteExpiredCounters(sql: Db): Promise<number> {
  return (await sql`delete from rate_limits where expire < (extract(epoch from now()) * 1000)::bigint`).count;
}

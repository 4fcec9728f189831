import type { Db } from '../../db/connect.ts';
import { AppError } from '../errors.ts';
import { SettledCounts, type Taken } from './settled-counts.ts';
import { secondsUntil } from './store.ts';

/** Reads and writes are counted apart, so a burst of polling never blocks a client's writes. */
export type RequestKind = 'read' | 'write';

export interface TokenLimitSettings {
  readsPerMinute: number;
  writesPerMinute: number;
  /** How often each process settles its counts with PostgreSQL (default once a second). */
  settleEveryMs?: number;
  /** A background settle failed (its points are kept for the next one). */
  onSettleError?: (err: unknown) => void;
}

/** REST: GET and HEAD read; every other method writes. */
export const requestKindOf = (method: string): RequestKind => (method === 'GET' || method === 'HEAD' ? 'read' : 'write');

/** The IETF RateLimit header fields (draft-ietf-httpapi-ratelimit-headers), sent with every token response. */
export type RateLimitHeaders = Record<'RateLimit-Limit' | 'RateLimit-Remaining' | 'RateLimit-Reset', string>;

function headersOf(limit: number, taken: Taken): RateLimitHeaders {
  return {
    'RateLimit-Limit': String(limit),
    'RateLimit-Remaining': String(Math.max(0, limit - taken.consumed)),
    'RateLimit-Reset': String(secondsUntil(taken.msBeforeNext)),
  };
}

/**
 * Requests per API token and minute, one budget for every web process (REST and MCP alike):
 * counted in this process's memory and settled with PostgreSQL about once a second (see
 * SettledCounts for the slack that allows), so a request costs no database statement beyond the
 * first of each token's window in each process. A token over its limit is refused from memory
 * until the window ends.
 */
export class TokenLimits {
  private counts: SettledCounts;
  private limits: Record<RequestKind, number>;

  constructor(sql: Db, settings: TokenLimitSettings) {
    this.limits = { read: settings.readsPerMinute, write: settings.writesPerMinute };
    this.counts = new SettledCounts(sql, { windowMs: 60_000, settleEveryMs: settings.settleEveryMs ?? 1000, onError: settings.onSettleError });
  }

  /**
   * Counts one request of the token and returns the RateLimit headers for its response; over the
   * limit it throws 429 `rate_limited` (reason `too_many_requests`) carrying them and Retry-After.
   */
  async consume(tokenId: string, kind: RequestKind): Promise<RateLimitHeaders> {
    const limit = this.limits[kind];
    // the keys of rate-limiter-flexible's `keyPrefix:key` that the table held before
    const taken = await this.counts.take(`token_${kind}:${tokenId}`, limit);
    const headers = headersOf(limit, taken);
    if (taken.allowed) return headers;
    const retryAfter = Number(headers['RateLimit-Reset']);
    throw new AppError(
      'rate_limited',
      `Too many ${kind}s with this token; try again in ${retryAfter} s.`,
      { reason: 'too_many_requests', kind, limit, retryAfter },
      { ...headers, 'Retry-After': String(retryAfter) },
    );
  }

  /** Settles this process's counts now and learns the other processes' (tests; the timer does it otherwise). */
  settle(): Promise<void> {
    return this.counts.settle();
  }

  /** Stops the settle timer after sending what was counted here; call before the pool closes. */
  stop(): Promise<void> {
    return this.counts.stop();
  }
}

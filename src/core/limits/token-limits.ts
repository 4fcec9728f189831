import type { RateLimiterPostgres, RateLimiterRes } from 'rate-limiter-flexible';
import type { Db } from '../../db/connect.ts';
import { AppError } from '../errors.ts';
import { isLimitReached, postgresLimiter, secondsUntil } from './store.ts';

/** Reads and writes are counted apart, so a burst of polling never blocks a client's writes. */
export type RequestKind = 'read' | 'write';

export interface TokenLimitSettings {
  readsPerMinute: number;
  writesPerMinute: number;
}

/** REST: GET and HEAD read; every other method writes. */
export const requestKindOf = (method: string): RequestKind => (method === 'GET' || method === 'HEAD' ? 'read' : 'write');

/** The IETF RateLimit header fields (draft-ietf-httpapi-ratelimit-headers), sent with every token response. */
export type RateLimitHeaders = Record<'RateLimit-Limit' | 'RateLimit-Remaining' | 'RateLimit-Reset', string>;

function headersOf(limit: number, res: RateLimiterRes): RateLimitHeaders {
  return {
    'RateLimit-Limit': String(limit),
    'RateLimit-Remaining': String(Math.max(0, res.remainingPoints)),
    'RateLimit-Reset': String(secondsUntil(res.msBeforeNext)),
  };
}

/**
 * Requests per API token and minute, counted in PostgreSQL so that every web process (REST and
 * MCP alike) draws on one budget. A request costs one upsert; once a token is over its limit,
 * this process refuses it from memory until the window ends.
 */
export class TokenLimits {
  private limiters: Record<RequestKind, { limiter: RateLimiterPostgres; limit: number }>;

  constructor(sql: Db, settings: TokenLimitSettings) {
    const make = (kind: RequestKind, points: number) => ({
      limiter: postgresLimiter(sql, { keyPrefix: `token_${kind}`, points, durationSeconds: 60 }),
      limit: points,
    });
    this.limiters = { read: make('read', settings.readsPerMinute), write: make('write', settings.writesPerMinute) };
  }

  /**
   * Counts one request of the token and returns the RateLimit headers for its response; over the
   * limit it throws 429 `rate_limited` (reason `too_many_requests`) carrying them and Retry-After.
   */
  async consume(tokenId: string, kind: RequestKind): Promise<RateLimitHeaders> {
    const { limiter, limit } = this.limiters[kind];
    try {
      return headersOf(limit, await limiter.consume(tokenId));
    } catch (err) {
      if (!isLimitReached(err)) throw err;
      const headers = headersOf(limit, err);
      const retryAfter = Number(headers['RateLimit-Reset']);
      throw new AppError(
        'rate_limited',
        `Too many ${kind}s with this token; try again in ${retryAfter} s.`,
        { reason: 'too_many_requests', kind, limit, retryAfter },
        { ...headers, 'Retry-After': String(retryAfter) },
      );
    }
  }
}

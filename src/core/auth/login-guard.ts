import type { RateLimiterPostgres } from 'rate-limiter-flexible';
import type { Db } from '../../db/connect.ts';
import { AppError } from '../errors.ts';
import { isLimitReached, postgresLimiter, secondsUntil } from '../limits/store.ts';

export interface LoginLimits {
  /** Failed attempts per email (login and re-authentication together) within the window. */
  perEmail: number;
  /** Failed attempts per client address within the window. */
  perAddress: number;
  windowSeconds: number;
}

export const DEFAULT_LOGIN_LIMITS: LoginLimits = { perEmail: 10, perAddress: 50, windowSeconds: 15 * 60 };

/**
 * Slows password guessing on login and re-authentication: after `perEmail` failed attempts for
 * one email, or `perAddress` from one address, within the window, further attempts answer 429
 * `rate_limited` with Retry-After until the window passes, whatever the password. Counts live
 * in PostgreSQL, so every web process sees the same ones.
 *
 * Each attempt takes its point before the password is checked (one atomic upsert per key), so a
 * burst of parallel guesses cannot all slip past a check made before any failure was recorded.
 * A success clears the email's count and gives the address its point back.
 */
export class LoginGuard {
  private byEmail: RateLimiterPostgres;
  private byAddress: RateLimiterPostgres;

  constructor(sql: Db, limits: LoginLimits = DEFAULT_LOGIN_LIMITS) {
    this.byEmail = postgresLimiter(sql, { keyPrefix: 'login_email', points: limits.perEmail, durationSeconds: limits.windowSeconds });
    this.byAddress = postgresLimiter(sql, { keyPrefix: 'login_address', points: limits.perAddress, durationSeconds: limits.windowSeconds });
  }

  /** Takes one attempt for the email and the address; throws 429 when either is used up. */
  async attempt(email: string, address: string): Promise<void> {
    const results = await Promise.allSettled([this.byEmail.consume(email.toLowerCase()), this.byAddress.consume(address)]);
    const blocked: number[] = [];
    for (const r of results) {
      if (r.status === 'fulfilled') continue;
      if (!isLimitReached(r.reason)) throw r.reason;
      blocked.push(r.reason.msBeforeNext);
    }
    if (blocked.length === 0) return;
    const retryAfter = secondsUntil(Math.max(...blocked));
    throw new AppError(
      'rate_limited',
      'Too many failed attempts; try again later.',
      { reason: 'too_many_attempts', retryAfter },
      { 'Retry-After': String(retryAfter) },
    );
  }

  async succeeded(email: string, address: string): Promise<void> {
    await Promise.all([this.byEmail.delete(email.toLowerCase()), this.byAddress.reward(address, 1)]);
  }
}

/** The guard of one request: the process's guard and the caller's address. */
export interface GuardedBy {
  guard: LoginGuard;
  address: string;
}

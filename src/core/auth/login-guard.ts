import { RateLimiterMemory } from 'rate-limiter-flexible';
import { AppError } from '../errors.ts';

const WINDOW_SECONDS = 15 * 60;

/**
 * Slows password guessing: after 10 failed logins for one email, or 50 from one address,
 * within 15 minutes, further attempts answer 429 `rate_limited` with Retry-After until the
 * window passes, whatever the password. A successful login clears the email's count.
 * Counts live in process memory (rate-limiter-flexible): per process, reset on restart.
 */
export class LoginGuard {
  private byEmail = new RateLimiterMemory({ points: 10, duration: WINDOW_SECONDS });
  private byAddress = new RateLimiterMemory({ points: 50, duration: WINDOW_SECONDS });

  async check(email: string, address: string): Promise<void> {
    const [e, a] = await Promise.all([this.byEmail.get(email.toLowerCase()), this.byAddress.get(address)]);
    const blocked = [
      { res: e, limit: 10 },
      { res: a, limit: 50 },
    ].filter((x) => x.res && x.res.consumedPoints >= x.limit);
    if (blocked.length === 0) return;
    const retryAfter = Math.max(1, Math.ceil(Math.max(...blocked.map((b) => b.res!.msBeforeNext)) / 1000));
    throw new AppError(
      'rate_limited',
      'Too many failed logins; try again later.',
      { reason: 'too_many_attempts', retryAfter },
      { 'Retry-After': String(retryAfter) },
    );
  }

  async failed(email: string, address: string): Promise<void> {
    await Promise.all([this.byEmail.penalty(email.toLowerCase(), 1), this.byAddress.penalty(address, 1)]);
  }

  async succeeded(email: string): Promise<void> {
    await this.byEmail.delete(email.toLowerCase());
  }
}

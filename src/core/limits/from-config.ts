import type { Config } from '../../config.ts';
import type { Db } from '../../db/connect.ts';
import type { Logger } from '../../log.ts';
import { LoginGuard } from '../auth/login-guard.ts';
import { TokenLimits } from './token-limits.ts';

/**
 * The login throttle and the per-token limits as the environment configures them (main and tests
 * build them alike). The token limits run a settle timer: stop them (`limits.stop()`) before the pool closes.
 */
export function limitsFromConfig(sql: Db, config: Config, log?: Logger): { loginGuard: LoginGuard; limits: TokenLimits } {
  return {
    loginGuard: new LoginGuard(sql, {
      perEmail: config.LOGIN_MAX_FAILURES_PER_EMAIL,
      perAddress: config.LOGIN_MAX_FAILURES_PER_ADDRESS,
      windowSeconds: config.LOGIN_WINDOW_SECONDS,
    }),
    limits: new TokenLimits(sql, {
      readsPerMinute: config.RATE_LIMIT_READS_PER_MINUTE,
      writesPerMinute: config.RATE_LIMIT_WRITES_PER_MINUTE,
      onSettleError: (err) => log?.warn({ err }, 'settling rate limit counts failed; they go with the next settle'),
    }),
  };
}

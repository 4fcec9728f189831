import { promises as dns } from 'node:dns';
import type { JobHelpers, Task } from 'graphile-worker';
import { loadConfig } from '../config.ts';
import { pollMailbox } from '../core/mail/intake/poll.ts';
import { schedulePolls } from '../core/mail/intake/schedule.ts';
import { loadSecretBox, type SecretBox } from '../core/mail/secret-box.ts';
import type { JobServices } from './billing.ts';
import { connectImap } from './machinery/imap.ts';

/**
 * The email intake's tasks: `mail:schedule` (on the crontab every minute) queues a `mail:poll`
 * per enabled mailbox; `mail:poll` reads one mailbox. The key that opens the stored passwords is
 * the process's, from the environment as `npm start` loads it (WT_SECRET_KEY, or the key file of
 * the embedded default), read when the first poll needs it.
 */
export function mailTasks(services: JobServices, secrets: () => SecretBox | null = () => loadSecretBox(loadConfig())): Record<string, Task> {
  const ctxOf = (helpers: JobHelpers) => ({ ...services, attempt: { number: helpers.job.attempts, max: helpers.job.max_attempts } });
  return {
    'mail:schedule': async (payload, helpers) => {
      await schedulePolls(ctxOf(helpers), payload);
    },
    'mail:poll': async (payload, helpers) => {
      // the senders' DKIM keys are looked up in the real DNS (the core asks through this one function)
      await pollMailbox(ctxOf(helpers), payload, {
        connect: connectImap,
        secrets: secrets(),
        resolver: (name, rrtype) => dns.resolve(name, rrtype) as Promise<string[][] | string[]>,
      });
    },
  };
}

/** Every minute; graphile-worker schedules each tick once however many workers run the crontab. */
export const mailCrontab = '* * * * * mail:schedule';

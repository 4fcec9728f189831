import { promises as dns } from 'node:dns';
import type { Task } from 'graphile-worker';
import { crons, pollJob } from '../core/jobs/catalog.ts';
import { pollMailbox } from '../core/mail/intake/poll.ts';
import { schedulePolls } from '../core/mail/intake/schedule.ts';
import { cronTask, jobTask, type JobServices } from './declared.ts';
import { connectImap } from './machinery/imap.ts';

/**
 * The email intake's tasks: `mail:schedule` (on the crontab every minute) queues a `mail:poll`
 * per enabled mailbox; `mail:poll` reads one mailbox through the worker's IMAP client, with
 * the key that opens the stored passwords as the composition root passed it (src/main.ts).
 */
export function mailTasks(services: JobServices) {
  return {
    schedule: cronTask(crons.mailSchedule, services, async (ctx) => {
      await schedulePolls(ctx);
    }),
    poll: jobTask(pollJob, services, (ctx, payload) =>
      // the senders' DKIM keys are looked up in the real DNS (the core asks through this one function)
      pollMailbox(ctx, payload, {
        connect: connectImap,
        secrets: services.secrets ?? null,
        resolver: (name, rrtype) => dns.resolve(name, rrtype) as Promise<string[][] | string[]>,
      }),
    ),
  } satisfies Record<string, Task>;
}

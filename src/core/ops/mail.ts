import { z } from 'zod';
import { requestPoll } from '../mail/intake/schedule.ts';
import { defineOp, runOp } from '../operation.ts';

/**
 * "Poll now" from the console: the mailbox's own poll request, audited as an operator action
 * (`mailbox.poll`, refusals too); the same request through REST is not audited.
 */
export const opsPollMailbox = defineOp({
  name: 'ops.mailbox.poll',
  action: 'mailbox.poll',
  input: z.object({}),
  output: null,
  audit: { action: 'mailbox.poll', target: () => 'mailbox' },
  run: (ctx) => runOp(requestPoll, ctx, {}),
});

import { listIntakeInput, listIntakeMessages } from '../../core/mail/intake/log.ts';
import { requestPoll } from '../../core/mail/intake/schedule.ts';
import { deleteMailbox, getMailbox, setMailbox, setMailboxInput } from '../../core/mail/intake/settings.ts';
import { loadSecretBox } from '../../core/mail/secret-box.ts';
import { outboundGuardFromConfig } from '../../core/net/outbound.ts';
import { coreCtx } from '../context.ts';
import { defineRoute } from '../route-table.ts';
import { intakeLogSchema, mailboxSchema, pollQueuedSchema } from '../../core/mail/intake/schema.ts';

/** The workspace's connected mailbox and its intake log (issue 12): Owner/Admin from a browser session. */
export const mailboxRoutes = [
  defineRoute({
    method: 'GET',
    path: '/mailbox',
    action: 'mailbox.read',
    input: {},
    output: mailboxSchema,
    handler: async ({ ctx, deps }) => {
      ctx.body = await getMailbox(coreCtx(deps, ctx));
    },
  }),
  defineRoute({
    method: 'PUT',
    path: '/mailbox',
    action: 'mailbox.write',
    input: { body: setMailboxInput },
    output: mailboxSchema,
    handler: async ({ ctx, deps }) => {
      ctx.body = await setMailbox(coreCtx(deps, ctx), ctx.request.body, loadSecretBox(deps.config), outboundGuardFromConfig(deps.config));
    },
  }),
  defineRoute({
    method: 'DELETE',
    path: '/mailbox',
    action: 'mailbox.write',
    input: {},
    output: { 204: null },
    handler: async ({ ctx, deps }) => {
      await deleteMailbox(coreCtx(deps, ctx));
      ctx.status = 204;
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/mailbox/poll',
    action: 'mailbox.poll',
    input: {},
    output: { 202: pollQueuedSchema },
    handler: async ({ ctx, deps }) => {
      ctx.body = await requestPoll(coreCtx(deps, ctx));
      ctx.status = 202;
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/mailbox/messages',
    action: 'mailbox.messages',
    input: { query: listIntakeInput },
    output: intakeLogSchema,
    handler: async ({ ctx, deps }) => {
      ctx.body = await listIntakeMessages(coreCtx(deps, ctx), ctx.query);
    },
  }),
];

import { listIntakeInput, listIntakeMessages } from '../../core/mail/intake/log.ts';
import { requestPoll } from '../../core/mail/intake/schedule.ts';
import { deleteMailbox, getMailbox, setMailbox, setMailboxInput } from '../../core/mail/intake/settings.ts';
import { defineRoute } from '../route-table.ts';

/** The workspace's connected mailbox and its intake log (issue 12): Owner/Admin from a browser session. */
export const mailboxRoutes = [
  defineRoute({ method: 'GET', path: '/mailbox', op: getMailbox, input: {} }),
  defineRoute({ method: 'PUT', path: '/mailbox', op: setMailbox, input: { body: setMailboxInput } }),
  defineRoute({ method: 'DELETE', path: '/mailbox', op: deleteMailbox, input: {}, status: 204 }),
  // a body names nothing here
  defineRoute({ method: 'POST', path: '/mailbox/poll', op: requestPoll, input: {}, sent: () => ({}), status: 202 }),
  defineRoute({ method: 'GET', path: '/mailbox/messages', op: listIntakeMessages, input: { query: listIntakeInput } }),
];

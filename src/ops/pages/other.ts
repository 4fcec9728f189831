import { listIntakeMessages, listIntakeInput } from '../../core/mail/intake/log.ts';
import { getMailbox } from '../../core/mail/intake/settings.ts';
import { listAudit } from '../../core/ops/audit-log.ts';
import { opsPollMailbox } from '../../core/ops/mail.ts';
import { listOutbox } from '../../core/ops/outbox.ts';
import { runOp } from '../../core/operation.ts';
import { toAppError } from '../../core/failures.ts';
import { defineAction, withMessage, type OpsRequest, type OpsRoute } from '../route.ts';
import { html, token, when, type Html } from '../html.ts';
import { actionForm, layout, table } from '../layout.ts';

const page = (r: OpsRequest, section: string, title: string, body: Html, live = false) => ({
  page: layout({ title, principal: r.principal, csrf: r.csrf, section, live, notice: r.query.msg, error: r.query.err }, body),
});

async function auditPage(r: OpsRequest) {
  const records = await runOp(listAudit, r.ctx, {});
  const rows = records.map(
    (a) =>
      html`<tr>
        <td>${when(a.at)}</td>
        <td>${a.actorName}</td>
        <td>${a.door}</td>
        <td>${a.action}</td>
        <td>${a.target ?? ''}</td>
        <td class="state-${a.outcome === 'succeeded' ? 'sent' : 'failed'}">${a.outcome}</td>
        <td>${a.detail ?? ''}</td>
      </tr>`,
  );
  return page(
    r,
    'audit',
    'Audit',
    table('Every operator action, newest first', ['When', 'Who', 'Door', 'Action', 'Target', 'Outcome', 'Detail'], rows, 'No operator action yet.'),
    true,
  );
}

async function outboxPage(r: OpsRequest) {
  if (!r.canAct) return page(r, 'outbox', 'Outbox', html`<p class="empty">Only an owner or admin reads the outbox.</p>`);
  const messages = await runOp(listOutbox, r.ctx, {});
  if (messages === null) return page(r, 'outbox', 'Outbox', html`<p class="empty">Mail goes to a real SMTP server (SMTP_URL): there is no local outbox.</p>`);
  const rows = messages.map(
    (m) =>
      html`<tr>
        <td>${when(m.date)}</td>
        <td>${token(m.from)}</td>
        <td>${m.to.map((to, i) => html`${i ? ', ' : ''}${token(to)}`)}</td>
        <td>${m.subject}</td>
        <td>
          ${
            m.attachments.length
              ? html`<ul>
                  ${m.attachments.map((a) => html`<li>${token(a.filename)} (${a.contentType}, ${a.size} bytes)</li>`)}
                </ul>`
              : 'none'
          }
        </td>
      </tr>`,
  );
  return page(
    r,
    'outbox',
    'Outbox',
    html`<p>What the local SMTP catcher received from this workspace: what a client would get.</p>
      ${table('Messages, newest first', ['Date', 'From', 'To', 'Subject', 'Attachments'], rows, 'No message yet.')}`,
    true,
  );
}

async function mailPage(r: OpsRequest) {
  const mailbox = await runOp(getMailbox, r.ctx, {}).catch((err: unknown) => {
    if (toAppError(err)?.status === 404) return null;
    throw err;
  });
  if (!mailbox) return page(r, 'mail', 'Mailbox', html`<p class="empty">This workspace has no mailbox connected.</p>`);
  const status = listIntakeInput.shape.status.safeParse(r.query.status || undefined).data;
  const log = await runOp(listIntakeMessages, r.ctx, { status, limit: 100 });
  const rows = log.items.map(
    (m) =>
      html`<tr>
        <td>${when(m.receivedAt)}</td>
        <td>${token(m.from)}</td>
        <td>${m.subject ?? ''}</td>
        <td class="state-${m.status === 'quarantined' ? 'failed' : 'sent'}">${m.status}</td>
        <td>${m.reason ?? ''}</td>
        <td>${m.verdict ?? ''}</td>
      </tr>`,
  );
  const statuses = ['', 'imported', 'reply', 'ignored', 'quarantined'];
  return page(
    r,
    'mail',
    'Mailbox',
    html`<dl class="facts">
        <dt>Server</dt>
        <dd>${mailbox.host}:${mailbox.port} ${mailbox.secure ? '(TLS)' : ''}</dd>
        <dt>User</dt>
        <dd>${mailbox.user}</dd>
        <dt>Folder</dt>
        <dd>${mailbox.folder}</dd>
        <dt>After import</dt>
        <dd>${mailbox.afterImport}${mailbox.moveTo ? ` to ${mailbox.moveTo}` : ''}</dd>
        <dt>Enabled</dt>
        <dd>${mailbox.enabled ? 'yes' : 'no'}</dd>
        <dt>Last poll</dt>
        <dd>${when(mailbox.lastPollAt)}</dd>
        <dt>Last error</dt>
        <dd>${mailbox.lastError ?? 'none'}</dd>
        <dt>UIDVALIDITY / last UID</dt>
        <dd>${mailbox.uidValidity ?? '–'} / ${mailbox.lastUid}</dd>
        <dt>Password</dt>
        <dd>stored sealed, never shown</dd>
      </dl>
      ${r.canAct ? actionForm('/ops/mail/poll', r.csrf, 'Poll now') : ''}
      <form method="get" action="/ops/mail" class="filters">
        <label for="status"
          >Status
          <select id="status" name="status">
            ${statuses.map((s) => html`<option value="${s}" ${s === (status ?? '') ? html`selected` : ''}>${s || 'all'}</option>`)}
          </select></label
        ><button type="submit">Filter</button>
      </form>
      ${table('Intake log, newest first', ['Received', 'From', 'Subject', 'Status', 'Reason', 'Sender check'], rows, 'No message read yet.')}`,
    true,
  );
}

export const otherPages: OpsRoute[] = [
  { method: 'GET', path: '/audit', page: auditPage },
  { method: 'GET', path: '/outbox', page: outboxPage },
  { method: 'GET', path: '/mail', page: mailPage },
  defineAction({
    method: 'POST',
    path: '/mail/poll',
    op: opsPollMailbox,
    sent: () => ({}),
    answer: () => ({ redirect: withMessage('/ops/mail', 'msg', 'A poll is queued.') }),
  }),
];

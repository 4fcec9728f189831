import { listRuns } from '../../core/billing/list.ts';
import { startRun, type RunPreview } from '../../core/billing/start.ts';
import { markDeliverySent, opsApproveRun, opsResendDelivery, opsStartRun, opsVoidRun, runDocuments, type OpsDocument } from '../../core/ops/billing.ts';
import { runOp } from '../../core/operation.ts';
import { listPeriods } from '../../core/periods/manage.ts';
import { defineAction, safeNext, withMessage, type OpsRequest, type OpsRoute } from '../route.ts';
import { html, minutes, ms, token, when, type Html } from '../html.ts';
import { actionForm, layout, table } from '../layout.ts';

const page = (r: OpsRequest, title: string, body: Html, live = false) => ({
  page: layout({ title, principal: r.principal, csrf: r.csrf, section: 'billing', live, notice: r.query.msg, error: r.query.err }, body),
});

async function runsPage(r: OpsRequest) {
  const { items } = await runOp(listRuns, r.ctx, { limit: 50 });
  const rows = items.map(
    (run) =>
      html`<tr>
        <td><a href="/ops/billing/runs/${run.id}">${run.periodStart} – ${run.periodEnd}</a></td>
        <td>${run.status}</td>
        <td class="num">${run.entryCount}</td>
        <td class="num">${minutes(run.billableMinutes)}</td>
        <td>${run.clients.map((c) => html`<div>${c.clientName}: ${c.entryCount} entries, ${minutes(c.billableMinutes)} billable</div>`)}</td>
        <td>${when(run.createdAt)}</td>
      </tr>`,
  );
  let form: Html = html``;
  if (r.canAct) {
    const closed = (await runOp(listPeriods, r.ctx, {})).periods.filter((p) => p.closedAt);
    form = closed.length
      ? html`<h2>New run</h2>
          <form method="get" action="/ops/billing/new" class="filters">
            <label for="periodId"
              >Closed period
              <select id="periodId" name="periodId">
                ${closed.map((p) => html`<option value="${p.id}">${p.periodStart} – ${p.periodEnd}</option>`)}
              </select></label
            >
            <button type="submit">Preview</button>
          </form>`
      : html`<h2>New run</h2>
          <p class="empty">No closed period to bill.</p>`;
  }
  return page(
    r,
    'Billing runs',
    html`${form}
      <h2>Runs</h2>
      ${table('Billing runs, newest first', ['Period', 'Status', 'Entries', 'Billable', 'Per client', 'Started'], rows, 'No billing runs yet.')}`,
    true,
  );
}

/** "New run", first step: the billing operation's dry run, shown with the button that starts the run. */
async function previewPage(r: OpsRequest) {
  const preview = (await runOp(startRun, r.ctx, { periodId: r.query.periodId ?? '', dryRun: true })) as RunPreview;
  const rows = preview.clients.map(
    (c) =>
      html`<tr>
        <td>${c.clientName}</td>
        <td class="num">${c.entryCount}</td>
        <td class="num">${minutes(c.minutes)}</td>
        <td class="num">${minutes(c.billableMinutes)}</td>
        <td class="num">${minutes(c.freeMinutes)}</td>
        <td class="num">${minutes(c.bankMinutes)}</td>
        <td>${c.documents.length}</td>
      </tr>`,
  );
  const confirm = preview.entryCount
    ? html`<form method="post" action="/ops/billing/runs" class="stack">
        <input type="hidden" name="_csrf" value="${r.csrf}" /> <input type="hidden" name="periodId" value="${preview.periodId}" />
        <button type="submit">Start the run: ${preview.entryCount} entries</button>
      </form>`
    : html`<p class="empty">Nothing to bill in this period.</p>`;
  return page(
    r,
    `Preview: ${preview.periodStart} – ${preview.periodEnd}`,
    html`<p>This is what the run would bill. Nothing is written until you start it.</p>
      ${table('What the run would bill, per client', ['Client', 'Entries', 'Minutes', 'Billable', 'Free', 'From banks', 'Timesheets'], rows, 'No entry qualifies.')}
      <p>Total: ${preview.entryCount} entries, ${minutes(preview.billableMinutes)} billable.</p>
      ${confirm}`,
  );
}

function deliveryCell(r: OpsRequest, d: OpsDocument['deliveries'][number], back: string): Html {
  const actions: Html[] = [];
  if (r.canAct && (d.state === 'failed' || d.state === 'unknown')) {
    actions.push(actionForm('/ops/billing/deliveries/resend', r.csrf, 'Resend', { deliveryId: d.id, _back: back }));
    if (d.state === 'unknown') actions.push(actionForm('/ops/billing/deliveries/mark-sent', r.csrf, 'Mark as sent', { deliveryId: d.id, _back: back }));
  }
  const notice = d.kind === 'void_notice' ? 'Void notice to ' : '';
  return html`<li data-delivery="${d.id}">
    ${notice}${d.email ? token(d.email) : '(no email)'}:
    <span class="state-${d.state}">${d.state}</span> ${d.detail ? html` <span class="muted">(${d.detail})</span>` : ''} · attempts ${d.attempts} ·
    ${when(d.attemptedAt)} ${actions}
  </li>`;
}

async function runPage(r: OpsRequest) {
  const { run, documents } = await runOp(runDocuments, r.ctx, { runId: r.params.id ?? '' });
  const back = `/ops/billing/runs/${run.id}`;
  const seen = new Set<string>();
  // a timesheet's deliveries carry all its formats: listed once, on its first document
  const firstOfSheet = (d: OpsDocument) => !seen.has(`${d.number}/${d.version}`) && seen.add(`${d.number}/${d.version}`);
  const rows = documents.map(
    (d) =>
      html`<tr>
        <td>${token(d.number)} v${d.version}</td>
        <td>${d.clientName}${d.projectName ? ` / ${d.projectName}` : ''}</td>
        <td>${d.format}</td>
        <td>${d.voided ? 'voided' : ''}${d.redacted ? ' redacted' : ''}</td>
        <td><code>${d.checksum.slice(0, 12)}</code></td>
        <td class="num">${d.bytes}</td>
        <td class="num">${ms(d.renderMs)}</td>
        <td><a href="/api/w/${r.principal.slug}/documents/${d.id}/download">Download</a></td>
        <td>
          ${
            firstOfSheet(d)
              ? html`<ul>
                  ${d.deliveries.map((x) => deliveryCell(r, x, back))}
                </ul>`
              : html`<span class="muted">with ${d.number}</span>`
          }
        </td>
      </tr>`,
  );
  const approveForm =
    r.canAct && run.status === 'awaiting_approval'
      ? html`<h2>Approve and send</h2>
          <form method="post" action="/ops/billing/runs/${run.id}/approve" class="stack" data-approve>
            <input type="hidden" name="_csrf" value="${r.csrf}" /><input type="hidden" name="_back" value="${back}" />
            <p>
              Nothing of this run has been sent, and its clients' users cannot see its documents yet. Read every document above; approving emails them to each
              billing recipient and cannot be undone (a void afterwards sends a notice).
            </p>
            <label for="approve-confirmation">Type SEND to confirm <input id="approve-confirmation" name="confirmation" required autocomplete="off" /></label>
            <button type="submit">Approve and send</button>
          </form>`
      : '';
  const voidForm =
    r.canAct && !['voided', 'allocating'].includes(run.status)
      ? html`<h2>Void this run</h2>
          <form method="post" action="/ops/billing/runs/${run.id}/void" class="stack">
            <input type="hidden" name="_csrf" value="${r.csrf}" /><input type="hidden" name="_back" value="${back}" />
            <p>Voiding releases every entry for a later run; the documents stay, marked voided. It cannot be undone.</p>
            <label for="reason">Reason <textarea id="reason" name="reason" required minlength="3" maxlength="500"></textarea></label>
            <label for="confirmation">Type VOID to confirm <input id="confirmation" name="confirmation" required autocomplete="off" /></label>
            <label for="password"
              >Your password (re-authentication) <input id="password" name="password" type="password" autocomplete="current-password"
            /></label>
            <button type="submit" class="danger">Void run</button>
          </form>`
      : '';
  return page(
    r,
    `Run ${run.periodStart} – ${run.periodEnd}`,
    html`<dl class="facts">
        <dt>Status</dt>
        <dd data-run-status>${run.status}</dd>
        <dt>Entries</dt>
        <dd>${run.entryCount}</dd>
        <dt>Billable</dt>
        <dd>${minutes(run.billableMinutes)}</dd>
        <dt>Started</dt>
        <dd>${when(run.createdAt)}</dd>
        ${
          run.voidedAt
            ? html`<dt>Voided</dt>
                <dd>${when(run.voidedAt)}: ${run.voidReason}</dd>`
            : ''
        }
        ${
          run.error
            ? html`<dt>Error</dt>
                <dd>${run.error}</dd>`
            : ''
        }
        <dt>Jobs</dt>
        <dd><a href="/ops/jobs/search?q=${run.id}">Jobs of this run</a></dd>
      </dl>
      <h2>Documents</h2>
      ${table('Documents and their deliveries', ['Number', 'Client', 'Format', 'Flags', 'Checksum', 'Bytes', 'Render', 'File', 'Deliveries'], rows, 'No documents yet.')}
      ${approveForm} ${voidForm}`,
    true,
  );
}

/** Back to the page the form was on (a console path only), else `fallback`. */
const back = (r: OpsRequest, fallback: string) => safeNext(r.body._back, fallback);

export const billingPages: OpsRoute[] = [
  { method: 'GET', path: '/billing', page: runsPage },
  { method: 'GET', path: '/billing/new', page: previewPage },
  defineAction({
    method: 'POST',
    path: '/billing/runs',
    op: opsStartRun,
    sent: (r) => ({ periodId: r.body.periodId ?? '' }),
    answer: (run) => ({ redirect: withMessage(`/ops/billing/runs/${run.dryRun ? '' : run.id}`, 'msg', 'The run was started.') }),
  }),
  { method: 'GET', path: '/billing/runs/:id', page: runPage },
  defineAction({
    method: 'POST',
    path: '/billing/runs/:id/void',
    op: opsVoidRun,
    reauth: true,
    confirm: { field: 'confirmation', word: 'VOID', message: 'Type VOID to confirm.' },
    sent: (r) => ({ runId: r.params.id ?? '', reason: r.body.reason ?? '' }),
    answer: (_, r) => ({ redirect: withMessage(`/ops/billing/runs/${r.params.id}`, 'msg', 'The run was voided.') }),
  }),
  defineAction({
    method: 'POST',
    path: '/billing/runs/:id/approve',
    op: opsApproveRun,
    confirm: { field: 'confirmation', word: 'SEND', message: 'Type SEND to confirm.' },
    sent: (r) => ({ runId: r.params.id ?? '' }),
    answer: (_, r) => ({ redirect: withMessage(`/ops/billing/runs/${r.params.id}`, 'msg', 'The run was approved; its timesheets are being sent.') }),
  }),
  defineAction({
    method: 'POST',
    path: '/billing/deliveries/resend',
    op: opsResendDelivery,
    sent: (r) => ({ deliveryId: r.body.deliveryId ?? '' }),
    answer: (_, r) => ({ redirect: withMessage(back(r, '/ops/billing'), 'msg', 'The delivery is queued to be sent again.') }),
  }),
  defineAction({
    method: 'POST',
    path: '/billing/deliveries/mark-sent',
    op: markDeliverySent,
    sent: (r) => ({ deliveryId: r.body.deliveryId ?? '' }),
    answer: (_, r) => ({ redirect: withMessage(back(r, '/ops/billing'), 'msg', 'The delivery was marked as sent.') }),
  }),
];

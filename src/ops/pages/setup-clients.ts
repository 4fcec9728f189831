import { archiveClient } from '../../core/clients/archive.ts';
import { createClient } from '../../core/clients/create.ts';
import { getClient } from '../../core/clients/get.ts';
import { listClients } from '../../core/clients/list.ts';
import { listRecipients, setRecipients } from '../../core/clients/recipients.ts';
import { updateClient } from '../../core/clients/update.ts';
import type { OperationInput } from '../../core/operation.ts';
import { runOp } from '../../core/operation.ts';
import { defineAction, withMessage, type OpsRequest, type OpsRoute } from '../route.ts';
import { html, token, type Html } from '../html.ts';
import { formHead, given, options, rowButton, setupPage, stackedTable, ticked } from './setup-common.ts';

const LAYOUTS = [
  ['combined', 'One timesheet, a section per project'],
  ['project', 'One timesheet per project'],
] as const;
const LINES = [
  ['ticket', 'A row per ticket'],
  ['entry', 'A row per time entry (date, person, hours, rate)'],
] as const;
const MODES = [
  ['period', 'Per period'],
  ['on_close', 'When a ticket closes'],
] as const;

type ClientFields = { name?: string; code?: string; locale?: string; timesheetLayout?: string; billingPolicy?: string; billingMode?: string };

/** The client's fields, as the create and edit forms show them (ids prefixed so both can share a page). */
function clientFields(prefix: string, c: ClientFields): Html {
  return html`<label for="${prefix}-name">Name <input id="${prefix}-name" name="name" required value="${c.name ?? ''}" /></label>
    <label for="${prefix}-code"
      >Code (2-12 letters or digits; starts document numbers) <input id="${prefix}-code" name="code" required value="${c.code ?? ''}"
    /></label>
    <label for="${prefix}-locale"
      >Locale of its timesheets (e.g. en-GB, de-DE) <input id="${prefix}-locale" name="locale" value="${c.locale ?? 'en-GB'}"
    /></label>
    <label for="${prefix}-layout"
      >Timesheet layout
      <select id="${prefix}-layout" name="timesheetLayout">
        ${options(LAYOUTS, c.timesheetLayout ?? 'combined')}
      </select></label
    >
    <label for="${prefix}-policy"
      >Default billing policy (paid, free or bank:&lt;id&gt;) <input id="${prefix}-policy" name="billingPolicy" value="${c.billingPolicy ?? 'paid'}"
    /></label>
    <label for="${prefix}-mode"
      >Default billing mode
      <select id="${prefix}-mode" name="billingMode">
        ${options(MODES, c.billingMode ?? 'period')}
      </select></label
    >`;
}

const fieldsSent = (b: Record<string, string>) => ({
  name: given(b.name),
  code: given(b.code),
  locale: given(b.locale),
  timesheetLayout: given(b.timesheetLayout) as OperationInput<typeof updateClient>['timesheetLayout'],
  billingPolicy: given(b.billingPolicy),
  billingMode: given(b.billingMode) as OperationInput<typeof updateClient>['billingMode'],
});

async function clientsPage(r: OpsRequest) {
  const { clients } = await runOp(listClients, r.ctx, { archived: 'all' });
  const rows = clients.map((c) => [
    html`<a href="/ops/setup/clients/${c.id}">${c.name}</a>`,
    html`${c.code}`,
    html`${c.locale}`,
    html`${c.timesheetLayout}`,
    html`${c.billingPolicy}, ${c.billingMode}`,
    html`${c.archivedAt ? 'archived' : 'active'}`,
  ]);
  return setupPage(
    r,
    'clients',
    'Clients',
    html`<h2>New client</h2>
      <form method="post" action="/ops/setup/clients" class="stack">
        ${formHead(r, '/ops/setup/clients')} ${clientFields('new', {})}
        <button type="submit">Create client</button>
      </form>
      <h2>Clients</h2>
      ${stackedTable('Clients by name', ['Client', 'Code', 'Locale', 'Layout', 'Billing', 'State'], rows, 'No client yet.')}`,
  );
}

/** How many blank recipient rows the recipients form offers for new addresses. */
const BLANK_RECIPIENTS = 1;

async function clientPage(r: OpsRequest) {
  const id = r.params.id ?? '';
  const [client, { recipients }] = await Promise.all([runOp(getClient, r.ctx, { id }), runOp(listRecipients, r.ctx, { id })]);
  const back = `/ops/setup/clients/${client.id}`;
  const userChoices = [['', 'none (an address only)'] as const, ...client.users.map((u) => [u.id, `${u.name}${u.email ? ` <${u.email}>` : ''}`] as const)];
  const slots = [...recipients, ...Array.from({ length: BLANK_RECIPIENTS }, () => null)];
  const recipientRows = slots.map((rc, i) => [
    html`<input name="email_${i}" type="email" aria-label="Email of recipient ${i + 1}" value="${rc?.email ?? ''}" autocomplete="off" />`,
    html`<input name="name_${i}" aria-label="Name of recipient ${i + 1}" value="${rc?.name ?? ''}" autocomplete="off" />`,
    html`<select name="identityId_${i}" aria-label="Client user of recipient ${i + 1}">
      ${options(userChoices, rc?.identityId)}
    </select>`,
    html`<input type="checkbox" name="optedOut_${i}" aria-label="Recipient ${i + 1} opted out" ${rc?.optedOut ? html`checked` : ''} />`,
    rc ? html`<input type="checkbox" name="remove_${i}" aria-label="Remove recipient ${i + 1}" />` : html`<span class="muted">new</span>`,
  ]);
  const users = client.users.map((u) => [html`${u.name}`, token(u.email), html`${u.role}`]);
  return setupPage(
    r,
    'clients',
    `Client: ${client.name}`,
    html`<p><a href="/ops/setup/clients">All clients</a></p>
      <h2>Billing recipients</h2>
      <p>Each receives the client’s timesheets by email. Fill the blank row to add one; tick “remove” to drop one.</p>
      <form method="post" action="/ops/setup/clients/${client.id}/recipients">
        ${formHead(r, back)}<input type="hidden" name="count" value="${String(slots.length)}" />
        ${stackedTable('Billing recipients, in the order they are sent', ['Email', 'Name', 'Client user', 'Opted out', 'Remove'], recipientRows, '')}
        <button type="submit">Save recipients</button>
      </form>
      <h2>Settings</h2>
      <form method="post" action="/ops/setup/clients/${client.id}" class="stack">
        ${formHead(r, back)} ${clientFields('edit', client)}
        <button type="submit">Save client</button>
      </form>
      <h2>On its timesheets</h2>
      <p>Fixed on each timesheet when its run is allocated: a change applies from the next run on.</p>
      <form method="post" action="/ops/setup/clients/${client.id}/documents" class="stack">
        ${formHead(r, back)}
        <label for="doc-address"
          >Billing address <textarea id="doc-address" name="billingAddress" rows="4" maxlength="500">${client.billingAddress ?? ''}</textarea>
        </label>
        <label for="doc-taxid">Tax ID <input id="doc-taxid" name="taxId" value="${client.taxId ?? ''}" maxlength="50" autocomplete="off" /></label>
        <label for="doc-lines"
          >Lines
          <select id="doc-lines" name="timesheetLines">
            ${options(LINES, client.timesheetLines)}
          </select></label
        >
        <button type="submit">Save timesheet details</button>
      </form>
      <h2>Users of this client</h2>
      <p>Invite client users on the <a href="/ops/setup/people">People</a> page.</p>
      ${stackedTable('Client users by name', ['Name', 'Email', 'Role'], users, 'No client user yet.')}
      <h2>${client.archivedAt ? 'Restore' : 'Archive'}</h2>
      <p>An archived client keeps its projects, time and documents; it leaves the client lists.</p>
      ${rowButton(r, `/ops/setup/clients/${client.id}/archive`, back, client.archivedAt ? 'Restore client' : 'Archive client', {
        archived: String(!client.archivedAt),
      })}`,
  );
}

/** The recipients form's rows (`email_0`, `name_0`, …): blank rows and those ticked "remove" are left out. */
function recipientsSent(b: Record<string, string>): OperationInput<typeof setRecipients>['recipients'] {
  const count = Math.min(Number(b.count) || 0, 100);
  const out: OperationInput<typeof setRecipients>['recipients'] = [];
  for (let i = 0; i < count; i++) {
    const email = given(b[`email_${i}`]);
    const identityId = given(b[`identityId_${i}`]);
    if (ticked(b[`remove_${i}`]) || (!email && !identityId)) continue;
    out.push({ email: email ?? null, name: given(b[`name_${i}`]) ?? null, identityId: identityId ?? null, optedOut: ticked(b[`optedOut_${i}`]) });
  }
  return out;
}

export const setupClientPages: OpsRoute[] = [
  { method: 'GET', path: '/setup/clients', page: clientsPage },
  { method: 'GET', path: '/setup/clients/:id', page: clientPage },
  defineAction({
    method: 'POST',
    path: '/setup/clients',
    op: createClient,
    sent: (r) => ({ ...fieldsSent(r.body), name: r.body.name ?? '', code: r.body.code ?? '' }),
    answer: (c) => ({ redirect: withMessage(`/ops/setup/clients/${c.id}`, 'msg', `Client ${c.name} (${c.code}) is created.`) }),
  }),
  defineAction({
    method: 'POST',
    path: '/setup/clients/:id',
    op: updateClient,
    sent: (r) => ({ id: r.params.id ?? '', ...fieldsSent(r.body) }),
    answer: (c) => ({ redirect: withMessage(`/ops/setup/clients/${c.id}`, 'msg', `Client ${c.name} is saved.`) }),
  }),
  defineAction({
    method: 'POST',
    path: '/setup/clients/:id/documents',
    op: updateClient,
    // every field is on the form: an emptied one is cleared
    sent: (r) => ({
      id: r.params.id ?? '',
      billingAddress: given(r.body.billingAddress) ?? null,
      taxId: given(r.body.taxId) ?? null,
      timesheetLines: given(r.body.timesheetLines) as OperationInput<typeof updateClient>['timesheetLines'],
    }),
    answer: (c) => ({ redirect: withMessage(`/ops/setup/clients/${c.id}`, 'msg', `${c.name}: the timesheet details are saved.`) }),
  }),
  defineAction({
    method: 'POST',
    path: '/setup/clients/:id/recipients',
    op: setRecipients,
    sent: (r) => ({ id: r.params.id ?? '', recipients: recipientsSent(r.body) }),
    answer: (res, r) => ({ redirect: withMessage(`/ops/setup/clients/${r.params.id}`, 'msg', `${res.recipients.length} billing recipient(s) saved.`) }),
  }),
  defineAction({
    method: 'POST',
    path: '/setup/clients/:id/archive',
    op: archiveClient,
    sent: (r) => ({ id: r.params.id ?? '', archived: r.body.archived !== 'false' }),
    answer: (c) => ({ redirect: withMessage(`/ops/setup/clients/${c.id}`, 'msg', c.archivedAt ? `${c.name} is archived.` : `${c.name} is restored.`) }),
  }),
];

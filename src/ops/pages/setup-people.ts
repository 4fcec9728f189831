import { listClients } from '../../core/clients/list.ts';
import { deactivateMember, reactivateMember } from '../../core/people/deactivate.ts';
import { listInvitations } from '../../core/people/invitations.ts';
import { createInvitation } from '../../core/people/invite.ts';
import { listPeople } from '../../core/people/list.ts';
import { resendInvitation } from '../../core/people/resend-invitation.ts';
import { revokeInvitation } from '../../core/people/revoke-invitation.ts';
import { changeRole } from '../../core/people/role.ts';
import type { OperationInput } from '../../core/operation.ts';
import { runOp } from '../../core/operation.ts';
import { defineAction, withMessage, type OpsRequest, type OpsRoute } from '../route.ts';
import { html, token, when } from '../html.ts';
import { formHead, idOrNull, options, rowButton, setupPage, stackedTable } from './setup-common.ts';

const BACK = '/ops/setup/people';

/** The roles a person is invited as or given (the operation checks them; an agent account is made by the CLI, not invited). */
const ROLES = [
  ['member', 'Member'],
  ['admin', 'Admin'],
  ['owner', 'Owner'],
  ['client_elevated', 'Client (elevated)'],
  ['client', 'Client'],
] as const;

/** People and invitations: invite, resend, revoke; change a role; deactivate and reactivate. */
async function peoplePage(r: OpsRequest) {
  const [{ people, omitted }, { invitations }, { clients }] = await Promise.all([
    runOp(listPeople, r.ctx, { q: r.query.q || undefined, limit: 200 }),
    runOp(listInvitations, r.ctx, { state: 'all' }),
    runOp(listClients, r.ctx, { archived: 'false' }),
  ]);
  const clientChoices = [['', 'none (workspace user)'] as const, ...clients.map((c) => [c.id, `${c.name} (${c.code})`] as const)];
  const clientName = new Map(clients.map((c) => [c.id, c.name]));

  const personRows = people.map((p) => {
    const self = p.id === r.principal.identityId;
    const roleForm =
      p.kind === 'agent'
        ? html`<span class="muted">agent account</span>`
        : html`<form method="post" action="/ops/setup/people/role" class="row-form">
            ${formHead(r, BACK)}<input type="hidden" name="identityId" value="${p.id}" />
            <select name="role" aria-label="Role of ${p.name}">
              ${options(ROLES, p.role)}
            </select>
            <select name="clientId" aria-label="Client of ${p.name}">
              ${options(clientChoices, p.client?.id)}
            </select>
            <button type="submit">Change role of ${p.name}</button>
          </form>`;
    const access = self
      ? html`<span class="muted">you</span>`
      : p.deactivated
        ? rowButton(r, '/ops/setup/people/reactivate', BACK, `Reactivate ${p.name}`, { identityId: p.id })
        : rowButton(r, '/ops/setup/people/deactivate', BACK, `Deactivate ${p.name}`, { identityId: p.id }, 'danger');
    return [
      // a workspace user's time settings are on their own page; a client user keeps none
      p.client ? html`${p.name}` : html`<a href="/ops/setup/people/${p.id}">${p.name}</a>`,
      token(p.email),
      html`${p.client ? p.client.name : html`<span class="muted">workspace</span>`}`,
      html`<span data-state>${p.deactivated ? 'deactivated' : 'active'}</span>`,
      roleForm,
      access,
    ];
  });

  const invitationRows = invitations.map((i) => [
    html`${i.name}`,
    token(i.email),
    html`${i.role}${i.clientId ? html` · ${clientName.get(i.clientId) ?? 'archived client'}` : ''}`,
    html`<span data-invitation-state>${i.state}</span>`,
    when(i.expiresAt),
    i.state === 'pending' || i.state === 'expired'
      ? html`${rowButton(r, '/ops/setup/invitations/resend', BACK, `Resend to ${i.email}`, { id: i.id })}
        ${i.state === 'pending' ? rowButton(r, '/ops/setup/invitations/revoke', BACK, `Revoke ${i.email}`, { id: i.id }, 'danger') : ''}`
      : html``,
  ]);

  return setupPage(
    r,
    'people',
    'People',
    html`<h2>Invite someone</h2>
      <p>They get an email with a link valid for 7 days. A client role needs the client; a workspace role takes none.</p>
      <form method="post" action="/ops/setup/invitations" class="stack">
        ${formHead(r, BACK)}
        <label for="invite-email">Email <input id="invite-email" name="email" type="email" required autocomplete="off" /></label>
        <label for="invite-name">Name <input id="invite-name" name="name" required autocomplete="off" /></label>
        <label for="invite-role"
          >Role
          <select id="invite-role" name="role">
            ${options(ROLES, 'member')}
          </select></label
        >
        <label for="invite-client"
          >Client (client roles only)
          <select id="invite-client" name="clientId">
            ${options(clientChoices, '')}
          </select></label
        >
        <button type="submit">Send invitation</button>
      </form>
      <h2>Invitations</h2>
      ${stackedTable('Invitations, newest first', ['Name', 'Email', 'Role', 'State', 'Expires', 'Actions'], invitationRows, 'No invitation yet.')}
      <h2>People</h2>
      <form method="get" action="/ops/setup/people" class="filters">
        <label for="people-q">Find by name or email <input id="people-q" name="q" value="${r.query.q ?? ''}" /></label>
        <button type="submit">Find</button>
      </form>
      ${stackedTable('People of the workspace', ['Name', 'Email', 'Client', 'Access', 'Role', 'Actions'], personRows, 'Nobody matches.')}
      ${omitted ? html`<p class="muted">${omitted} more: narrow the search.</p>` : ''}`,
  );
}

export const setupPeoplePages: OpsRoute[] = [
  { method: 'GET', path: '/setup', page: () => Promise.resolve({ redirect: BACK }) },
  { method: 'GET', path: '/setup/people', page: peoplePage },
  defineAction({
    method: 'POST',
    path: '/setup/invitations',
    op: createInvitation,
    sent: (r) => ({
      email: r.body.email ?? '',
      name: r.body.name ?? '',
      role: r.body.role as OperationInput<typeof createInvitation>['role'],
      clientId: idOrNull(r.body.clientId),
    }),
    answer: (i) => ({ redirect: withMessage(BACK, 'msg', `${i.name} is invited: an email is on its way to ${i.email}.`) }),
  }),
  defineAction({
    method: 'POST',
    path: '/setup/invitations/resend',
    op: resendInvitation,
    sent: (r) => ({ id: r.body.id ?? '' }),
    answer: (i) => ({ redirect: withMessage(BACK, 'msg', `The invitation to ${i.email} is sent again.`) }),
  }),
  defineAction({
    method: 'POST',
    path: '/setup/invitations/revoke',
    op: revokeInvitation,
    sent: (r) => ({ id: r.body.id ?? '' }),
    answer: (i) => ({ redirect: withMessage(BACK, 'msg', `The invitation to ${i.email} is revoked.`) }),
  }),
  defineAction({
    method: 'POST',
    path: '/setup/people/role',
    op: changeRole,
    sent: (r) => ({ identityId: r.body.identityId ?? '', role: r.body.role as OperationInput<typeof changeRole>['role'], clientId: idOrNull(r.body.clientId) }),
    answer: (c) => ({ redirect: withMessage(BACK, 'msg', `Role changed: ${c.previousRole} → ${c.role}.`) }),
  }),
  defineAction({
    method: 'POST',
    path: '/setup/people/deactivate',
    op: deactivateMember,
    sent: (r) => ({ identityId: r.body.identityId ?? '' }),
    answer: (m) => ({ redirect: withMessage(BACK, 'msg', `${m.name} is deactivated: their sessions and tokens no longer work here.`) }),
  }),
  defineAction({
    method: 'POST',
    path: '/setup/people/reactivate',
    op: reactivateMember,
    sent: (r) => ({ identityId: r.body.identityId ?? '' }),
    answer: (m) => ({ redirect: withMessage(BACK, 'msg', `${m.name} is active again.`) }),
  }),
];

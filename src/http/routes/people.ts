import { z } from 'zod';
import { deactivateMember, reactivateMember } from '../../core/people/deactivate.ts';
import { listPeople, listPeopleInput } from '../../core/people/list.ts';
import { invitationListSchema } from '../../core/people/invitation-view.ts';
import { listInvitations, listInvitationsInput } from '../../core/people/invitations.ts';
import { createInvitation, createInvitationInput } from '../../core/people/invite.ts';
import { resendInvitation } from '../../core/people/resend-invitation.ts';
import { revokeInvitation } from '../../core/people/revoke-invitation.ts';
import { updateMember, updateMemberFields } from '../../core/people/update-member.ts';
import { getSettings, settingsFields, updateSettings } from '../../core/workspaces/settings.ts';
import { defineRoute, idParam } from '../route-table.ts';

const byId = z.object({ id: idParam() });
const byMember = z.object({ identityId: idParam('identityId') });

/** People (issue 22): the list (read), invitations, members, and the workspace's own settings (Owner/Admin by session or admin-scoped token). */
export const peopleRoutes = [
  defineRoute({ method: 'GET', path: '/people', op: listPeople, input: { query: listPeopleInput } }),
  defineRoute({ method: 'GET', path: '/invitations', op: listInvitations, input: { query: listInvitationsInput }, output: invitationListSchema }),
  defineRoute({ method: 'POST', path: '/invitations', op: createInvitation, input: { body: createInvitationInput }, status: 201 }),
  defineRoute({ method: 'POST', path: '/invitations/:id/resend', op: resendInvitation, input: { params: byId } }),
  defineRoute({ method: 'DELETE', path: '/invitations/:id', op: revokeInvitation, input: { params: byId } }),
  defineRoute({ method: 'PATCH', path: '/members/:identityId', op: updateMember, input: { params: byMember, body: updateMemberFields } }),
  defineRoute({ method: 'POST', path: '/members/:identityId/deactivate', op: deactivateMember, input: { params: byMember } }),
  defineRoute({ method: 'POST', path: '/members/:identityId/reactivate', op: reactivateMember, input: { params: byMember } }),
  defineRoute({ method: 'GET', path: '/settings', op: getSettings, input: {} }),
  defineRoute({ method: 'PATCH', path: '/settings', op: updateSettings, input: { body: settingsFields.partial() } }),
];

import { z } from 'zod';
import { authorize } from '../access/authorize.ts';
import { isClientRole, roles } from '../auth/principal.ts';
import { defineOp, runOp } from '../operation.ts';
import { memberSettingsFields, updateMemberSettings } from '../time/member-settings.ts';
import { idField, withReasons } from '../validation.ts';
import { loadMember, memberSchema } from './member-view.ts';
import { changeRole } from './role.ts';

export const updateMemberFields = memberSettingsFields.extend({
  role: z.enum(roles).optional().describe('Owner/Admin only: the new role (a client role drops workspace-only rights)'),
  clientId: z.uuid().toLowerCase().nullable().optional().describe('Owner/Admin only: the client of a client user; null for a workspace user'),
});
const updateMemberInput = withReasons(updateMemberFields.extend({ identityId: idField('The member.') }), { identityId: 'bad_uuid' });

/**
 * PATCH /members/{identityId}: one member's role and client (Owner/Admin: the audited role change,
 * `changeRole`) and time settings (the person themselves or Owner/Admin: `updateMemberSettings`),
 * in one transaction, each through runOp so its own rule and audit hold. A role sent alone keeps
 * the client of a client user moving between client roles; a workspace role takes none.
 */
export const updateMember = defineOp({
  name: 'members.set',
  action: 'members.update',
  input: updateMemberInput,
  output: memberSchema,
  tx: true,
  run: async (ctx, input) => {
    const { identityId, role, clientId, ...settings } = input;
    const { sql, principal: p } = ctx;
    const roleSent = role !== undefined || clientId !== undefined;
    if (roleSent) {
      // asked even when nothing changes: only Owner/Admin speak of roles
      authorize(ctx, 'members.role');
      const current = await loadMember(sql, p.workspaceId, identityId, true);
      const nextRole = role ?? current.role;
      const nextClient = clientId !== undefined ? clientId : isClientRole(nextRole) ? current.clientId : null;
      if (nextRole !== current.role || nextClient !== current.clientId) await runOp(changeRole, ctx, { identityId, role: nextRole, clientId: nextClient });
    }
    // without a role change the settings operation always runs: its rules decide who may read or change whose settings
    if (!roleSent || Object.values(settings).some((v) => v !== undefined)) await runOp(updateMemberSettings, ctx, { identityId, ...settings });
    return loadMember(sql, p.workspaceId, identityId);
  },
});

import { z } from 'zod';
import { defineOp } from '../operation.ts';
import { idField, withReasons } from '../validation.ts';
import { loadMember, memberSchema } from './member-view.ts';

const getMemberInput = withReasons(z.object({ identityId: idField('The member.') }), { identityId: 'bad_uuid' });

/**
 * One member as an Owner or Admin manages them: role, client and time settings (the console's
 * member page, issue 22). Reading a member's settings is reading the workspace's settings, so it
 * asks `settings.read` (Owner/Admin) rather than a new action. Read-only: no transaction.
 */
export const getMember = defineOp({
  name: 'members.read',
  action: 'settings.read',
  input: getMemberInput,
  output: memberSchema,
  run: (ctx, { identityId }) => loadMember(ctx.sql, ctx.principal.workspaceId, identityId),
});

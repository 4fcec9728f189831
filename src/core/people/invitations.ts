import { z } from 'zod';
import { defineOp } from '../operation.ts';
import { invitationColumns, invitationListSchema, type Invitation } from './invitation-view.ts';

export const listInvitationsInput = z.object({
  state: z.enum(['pending', 'accepted', 'revoked', 'expired', 'all']).default('all').describe('Only invitations in this state; default all'),
});

/** GET /invitations: the workspace's invitations, newest first (the latest 500). */
export const listInvitations = defineOp({
  name: 'invitations.list',
  action: 'invitations.list',
  input: listInvitationsInput,
  output: invitationListSchema,
  run: async (ctx, input): Promise<{ invitations: Invitation[] }> => {
    const { sql } = ctx;
    const rows = await sql<Invitation[]>`
      select * from (
        select ${invitationColumns(sql, ctx.now())}, i.created_at as at from invitations i where i.workspace_id = ${ctx.principal.workspaceId}
      ) x
      ${input.state === 'all' ? sql`` : sql`where x.state = ${input.state}`}
      order by x.at desc, x.id limit 500`;
    return { invitations: rows.map(({ at: _at, ...inv }: Invitation & { at?: Date }) => inv) };
  },
});

import { z } from 'zod';
import { authorize } from '../access/authorize.ts';
import { defineOp } from '../operation.ts';
import { loadTicket } from '../tickets/load.ts';
import { ticketRef } from '../tickets/schemas.ts';
import { classifyMentions, personSeesTicket, type ClientPerson, type VisibilityPreview } from './audience.ts';
import { visibilityPreviewSchema } from './schema.ts';

export type { VisibilityPreview } from './audience.ts';

export const audiences = ['internal', 'client'] as const;

/** POST /tickets/{ref}/visibility's body. */
export const visibilityPreviewFields = z.object({
  audience: z.enum(audiences).describe('"internal": workspace users only; "client": everyone who can see the ticket, client people included'),
  mentions: z.array(z.uuid()).max(20).default([]).describe('Up to 20 identity ids the comment would mention'),
});
export const visibilityPreviewInput = visibilityPreviewFields.extend({ ref: ticketRef });

/**
 * POST /tickets/{ref}/visibility: who would read a comment at `audience` mentioning `mentions`,
 * before it is posted. Same rules as posting (comments/create.ts), so the preview and the post
 * cannot disagree. An audience the caller may not write is 403 `audience_forbidden` (the action's
 * rule, the one of posting).
 */
export const previewVisibility = defineOp({
  name: 'viewers.preview',
  action: 'viewers.preview',
  input: visibilityPreviewInput,
  output: visibilityPreviewSchema,
  run: async (ctx, { ref, audience, mentions }): Promise<VisibilityPreview> => {
    const { sql } = ctx;
    const t = await loadTicket(ctx, ref);
    authorize(ctx, 'viewers.preview', t, { audience });
    const outcome = await classifyMentions(sql, t, audience, mentions);
    const [row] = await sql<{ workspaceUsers: number; clientPeople: ClientPerson[] }[]>`
    select count(*) filter (where m.client_id is null)::integer as "workspaceUsers",
           coalesce(json_agg(json_build_object('identityId', m.identity_id, 'name', person_name(m.workspace_id, i.id, i.name), 'clientName', c.name)
                             order by lower(person_name(m.workspace_id, i.id, i.name)), m.identity_id)
                    filter (where m.client_id is not null), '[]') as "clientPeople"
    from tickets t
    join memberships m on m.workspace_id = t.workspace_id
    join identities i on i.id = m.identity_id
    left join clients c on c.id = m.client_id
    where t.id = ${t.id} and ${personSeesTicket(sql)}`;
    return {
      audience,
      workspaceUsers: row!.workspaceUsers,
      clientPeople: audience === 'client' ? row!.clientPeople : [],
      willGainAccess: outcome.willGainAccess,
      denied: outcome.denied,
    };
  },
});

import { z } from 'zod';
import type { Ctx } from '../ctx.ts';
import { notFound } from '../errors.ts';
import { defineOp } from '../operation.ts';
import { okSchema } from '../response-schema.ts';
import { unknownPerson } from '../resolve/people.ts';
import { idField, withReasons } from '../validation.ts';
import { documentGrantsSchema, type DocumentGrant, type DocumentGrants, type GrantCandidate } from './list-schema.ts';

export const setDocumentGrantInput = z.object({
  identityId: z.uuid().toLowerCase().describe('The workspace user to grant (or revoke) every document of the client.'),
  granted: z.boolean().describe('true grants, false revokes; either is idempotent.'),
});

const clientId = idField('The client (uuid).');
const listGrantsInput = withReasons(z.object({ id: clientId }), { id: 'bad_uuid' });
const setGrantInput = withReasons(setDocumentGrantInput.extend({ id: clientId }), { id: 'bad_uuid' });

export type { DocumentGrant, DocumentGrants, GrantCandidate } from './list-schema.ts';

/** The path's client, of this workspace: else 404 `unknown_client`. */
async function requireClient(ctx: Ctx, clientId: string): Promise<void> {
  const [c] = await ctx.sql`select 1 from clients where id = ${clientId} and workspace_id = ${ctx.principal.workspaceId}`;
  if (!c) throw notFound('unknown_client', undefined, 'No such client.');
}

/**
 * GET /clients/{id}/document-grants (Owner/Admin, session): who holds a grant for the client, and
 * who could get one. Candidates are the members and agents without one: Owner and Admin download
 * every document already, and client users never hold grants (the rule ignores them).
 */
export const listDocumentGrants = defineOp({
  name: 'documents.grants.list',
  action: 'documents.grants.list',
  input: listGrantsInput,
  output: documentGrantsSchema,
  run: async (ctx, { id: clientId }): Promise<DocumentGrants> => {
    await requireClient(ctx, clientId);
    const { sql, principal: p } = ctx;
    const grants = await sql<DocumentGrant[]>`
      select g.id, g.identity_id as "identityId", i.name, i.email
      from document_grants g join identities i on i.id = g.identity_id
      where g.workspace_id = ${p.workspaceId} and g.client_id = ${clientId}
      order by lower(i.name), i.id`;
    const candidates = await sql<GrantCandidate[]>`
      select m.identity_id as "identityId", i.name, i.email
      from memberships m join identities i on i.id = m.identity_id
      where m.workspace_id = ${p.workspaceId} and m.role in ('member', 'agent')
        and not exists (select 1 from document_grants g where g.client_id = ${clientId} and g.identity_id = m.identity_id)
      order by lower(i.name), i.id`;
    return { grants: [...grants], candidates: [...candidates] };
  },
});

/**
 * PUT /clients/{id}/document-grants (Owner/Admin, session): grants or revokes, idempotently. A
 * grant is for a workspace user of this workspace; anyone else (a client user, a stranger) is the
 * 404 `unknown_person` of a person acted for. A revoke also clears the grant of someone who has
 * since left the workspace, so the list never shows a grant that cannot be removed.
 */
export const setDocumentGrant = defineOp({
  name: 'documents.grants.set',
  action: 'documents.grants.set',
  input: setGrantInput,
  output: okSchema,
  tx: true,
  run: async (ctx, body): Promise<{ ok: true }> => {
    const { sql, principal: p } = ctx;
    const clientId = body.id;
    await requireClient(ctx, clientId);
    if (body.granted) {
      const [m] = await sql`
        select 1 from memberships m where m.workspace_id = ${p.workspaceId} and m.identity_id = ${body.identityId}
          and m.role in ('owner', 'admin', 'member', 'agent')`;
      if (!m) throw unknownPerson('subject', { identityId: body.identityId }, 'No such workspace user: grants are for workspace users.');
      await sql`
        insert into document_grants (workspace_id, client_id, identity_id, granted_by)
        values (${p.workspaceId}, ${clientId}, ${body.identityId}, ${p.identityId})
        on conflict (client_id, identity_id) do nothing`;
      return { ok: true as const };
    }
    const removed = await sql`
      delete from document_grants where workspace_id = ${p.workspaceId} and client_id = ${clientId} and identity_id = ${body.identityId}
      returning id`;
    if (removed.length === 0) {
      const [m] = await sql`select 1 from memberships where workspace_id = ${p.workspaceId} and identity_id = ${body.identityId}`;
      if (!m) throw unknownPerson('subject', { identityId: body.identityId });
    }
    return { ok: true as const };
  },
});

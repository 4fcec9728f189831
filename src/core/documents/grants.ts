import { z } from 'zod';
import { authorize } from '../access/authorize.ts';
import { tx, type Ctx } from '../ctx.ts';
import { notFound } from '../errors.ts';
import { unknownPerson } from '../resolve/people.ts';
import { parseUuid } from '../validation.ts';

export const setDocumentGrantInput = z.object({
  identityId: z.uuid().toLowerCase().describe('The workspace user to grant (or revoke) every document of the client.'),
  granted: z.boolean().describe('true grants, false revokes; either is idempotent.'),
});

/** The contract's Document grant entry. */
export interface DocumentGrant {
  id: string;
  identityId: string;
  name: string;
  email: string | null;
}

export type GrantCandidate = Omit<DocumentGrant, 'id'>;

export interface DocumentGrants {
  grants: DocumentGrant[];
  candidates: GrantCandidate[];
}

/** The path's client, of this workspace: else 404 `unknown_client`. */
async function loadClientId(ctx: Ctx, raw: unknown): Promise<string> {
  const clientId = parseUuid(raw, 'id');
  const [c] = await ctx.sql`select 1 from clients where id = ${clientId} and workspace_id = ${ctx.principal.workspaceId}`;
  if (!c) throw notFound('unknown_client', undefined, 'No such client.');
  return clientId;
}

/**
 * GET /clients/{id}/document-grants (Owner/Admin, session): who holds a grant for the client, and
 * who could get one. Candidates are the members and agents without one: Owner and Admin download
 * every document already, and client users never hold grants (the rule ignores them).
 */
export async function listDocumentGrants(ctx: Ctx, input: unknown): Promise<DocumentGrants> {
  authorize(ctx, 'documents.grants.list');
  const clientId = await loadClientId(ctx, (input as { clientId?: unknown } | undefined)?.clientId);
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
}

/**
 * PUT /clients/{id}/document-grants (Owner/Admin, session): grants or revokes, idempotently. A
 * grant is for a workspace user of this workspace; anyone else (a client user, a stranger) is the
 * 404 `unknown_person` of a person acted for. A revoke also clears the grant of someone who has
 * since left the workspace, so the list never shows a grant that cannot be removed.
 */
export async function setDocumentGrant(ctx: Ctx, input: unknown): Promise<{ ok: true }> {
  authorize(ctx, 'documents.grants.set');
  const raw = (input ?? {}) as { clientId?: unknown };
  const clientId = parseUuid(raw.clientId, 'id');
  const body = setDocumentGrantInput.parse(input);
  return tx(ctx, async (ctx) => {
    const { sql, principal: p } = ctx;
    await loadClientId(ctx, clientId);
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
  });
}

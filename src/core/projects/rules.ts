import type { Ctx } from '../ctx.ts';
import { conflict, invalid, notFound } from '../errors.ts';
import { checkBillingBank } from '../tickets/fields.ts';

/** The Inbox's prefix: no project may take it (INBOX-3 must name an Inbox ticket). */
const RESERVED_KEYS = new Set(['INBOX']);

/**
 * A key the project may take: not reserved (400 `key_reserved`), and neither the key nor a former
 * key of another project (409 `key_taken`): a human id with that prefix keeps naming that
 * project's tickets for good (project_prefixes). The project's own former keys are free to it.
 */
export async function assertKeyFree(ctx: Ctx, key: string, projectId: string | null): Promise<void> {
  if (RESERVED_KEYS.has(key)) throw invalid('key_reserved', { field: 'key' }, `${key} is reserved.`);
  const [hit] = await ctx.sql<{ key: string }[]>`
    select pr.key from project_prefixes pp join projects pr on pr.id = pp.project_id
    where pp.workspace_id = ${ctx.principal.workspaceId} and pp.prefix = ${key} and pp.project_id is distinct from ${projectId}::uuid`;
  if (hit) {
    const message =
      hit.key === key ? `Another project has the key ${key}.` : `${key} was a key of project ${hit.key}; its human ids still name that project's tickets.`;
    throw conflict('key_taken', { field: 'key', key }, message);
  }
}

/**
 * The billing client and the collaborating clients: clients of this workspace (404
 * `unknown_client`), not archived when newly named (409 `client_archived`; `kept` are the ones the
 * project already has), and the billing client never also a collaborator (400
 * `collaborator_is_billing_client`).
 */
export async function checkClients(ctx: Ctx, billingClientId: string | null, collaboratorIds: string[], kept: string[] = []): Promise<void> {
  const named = [...(billingClientId ? [billingClientId] : []), ...collaboratorIds];
  const rows = await ctx.sql<{ id: string; archived: boolean }[]>`
    select id, archived_at is not null as archived from clients where workspace_id = ${ctx.principal.workspaceId} and id = any(${named}::uuid[])`;
  const found = new Map(rows.map((r) => [r.id, r.archived]));
  const fieldOf = (id: string) => (id === billingClientId ? 'billingClientId' : `collaboratorIds.${collaboratorIds.indexOf(id)}`);
  for (const id of named) {
    if (!found.has(id)) throw notFound('unknown_client', { field: fieldOf(id) }, 'No such client.');
    if (found.get(id) && !kept.includes(id)) throw conflict('client_archived', { field: fieldOf(id) }, 'This client is archived; restore it first.');
  }
  if (billingClientId && collaboratorIds.includes(billingClientId)) {
    throw invalid(
      'collaborator_is_billing_client',
      { field: 'collaboratorIds' },
      'The billing client takes part already; list only other clients as collaborators.',
    );
  }
}

/** A `bank:<id>` policy names a bank of the workspace that belongs to the billing client (tickets' rule, checkBillingBank). */
export async function checkProjectBank(ctx: Ctx, policy: string | null, billingClientId: string | null): Promise<void> {
  if (policy) await checkBillingBank(ctx.sql, ctx.principal.workspaceId, policy, billingClientId);
}

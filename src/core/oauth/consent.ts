import { z } from 'zod';
import type { Db } from '../../db/connect.ts';
import { sessionPrincipal, type Session } from '../auth/sessions.ts';
import { forbidden, invalid, notFound } from '../errors.ts';
import { defineOp } from '../operation.ts';
import { grantableProjects, recordGrant } from './grants.ts';
import { endGrant } from './records.ts';
import { OAUTH_SCOPES, roleScopes } from './scopes.ts';

/**
 * The person's two writes on the authorization server's pages, as operations of the browser
 * session in the grant's workspace: a consent creates a delegated token (so `tokens.create`),
 * a revocation revokes one (`tokens.revoke`). Both are audited.
 */

const consentInput = z.object({
  grantId: z.string().min(1).max(200).describe('The authorization server’s grant id'),
  clientId: z.string().min(1).max(2000),
  clientName: z.string().min(1).max(200),
  requested: z.array(z.enum(OAUTH_SCOPES)).describe('What the client asked for'),
  scopes: z.array(z.string().max(20)).max(10).describe('What the person ticked'),
  projectIds: z.array(z.uuid()).max(100).describe('The allow-list; empty: every project the person sees'),
});

/**
 * The consent: never more than the person's role allows nor more than the client asked for
 * (403 `scope_not_allowed`, audited as a refusal; the page answers the client invalid_scope), at least one
 * scope (`no_scope`), and only projects the person may name (404 `unknown_project`).
 */
export const consentGrant = defineOp({
  name: 'oauth.consent',
  action: 'tokens.create',
  input: consentInput,
  output: null,
  tx: true,
  audit: { action: 'oauth.consent', target: (sent) => `client ${String(sent.clientId)}`, detail: (input) => `scopes ${input.scopes.join(' ')}` },
  run: async (ctx, input) => {
    const p = ctx.principal;
    const ceiling: readonly string[] = roleScopes(p.role);
    const requested: readonly string[] = input.requested;
    const beyond = input.scopes.filter((s) => !requested.includes(s) || !ceiling.includes(s));
    if (beyond.length) {
      throw forbidden('scope_not_allowed', { scopes: beyond }, `Not allowed for your role (${p.role}) or not asked for: ${beyond.join(', ')}.`);
    }
    const scopes = OAUTH_SCOPES.filter((s) => input.scopes.includes(s));
    if (!scopes.length) throw invalid('no_scope', undefined, 'No access was allowed.');
    const projectIds = [...new Set(input.projectIds)];
    const mine = new Set((await grantableProjects(ctx.sql, p)).map((x) => x.id));
    if (projectIds.some((id) => !mine.has(id))) throw notFound('unknown_project', undefined, 'A project of the allow-list is not one of yours.');
    return recordGrant(
      ctx.sql,
      {
        grantId: input.grantId,
        workspaceId: p.workspaceId,
        identityId: p.identityId,
        clientId: input.clientId,
        clientName: input.clientName,
        scopes,
        projectIds: projectIds.length ? projectIds : null,
      },
      ctx.now(),
    );
  },
});

/** The grants page's revoke: the person's own grant only (404 otherwise); its tokens stop at once on every process. */
export const revokeOAuthGrant = defineOp({
  name: 'oauth.revoke',
  action: 'tokens.revoke',
  input: z.object({ grantId: z.string().min(1).max(200) }),
  output: null,
  tx: true,
  audit: { action: 'oauth.revoke', target: (sent) => `grant ${String(sent.grantId)}` },
  run: async (ctx, { grantId }) => {
    const p = ctx.principal;
    const [mine] = await ctx.sql`select 1 from oauth_grants where grant_id = ${grantId} and identity_id = ${p.identityId} and workspace_id = ${p.workspaceId}`;
    if (!mine) throw notFound();
    await endGrant(ctx.sql, grantId, ctx.now());
    return { ok: true as const };
  },
});

/** The workspace a grant was given in (the revoke runs as the person's session there). */
export async function grantWorkspace(sql: Db, identityId: string, grantId: string): Promise<string | null> {
  const [r] = await sql<{ slug: string }[]>`
    select w.slug from oauth_grants g join workspaces w on w.id = g.workspace_id where g.grant_id = ${grantId} and g.identity_id = ${identityId}`;
  return r?.slug ?? null;
}

/**
 * What the consent page offers a signed-in person: their name, and each workspace where they are an
 * active member with their role, the scopes that role allows and the projects they may grant.
 */
export async function consentChoices(sql: Db, session: Session) {
  const [who] = await sql<{ name: string }[]>`select name from identities where id = ${session.identityId}`;
  const rows = await sql<{ slug: string; name: string }[]>`
    select w.slug, w.name from memberships m join workspaces w on w.id = m.workspace_id
    where m.identity_id = ${session.identityId} and m.deactivated_at is null order by w.slug`;
  const workspaces = await Promise.all(
    rows.map(async (w) => {
      const p = await sessionPrincipal(sql, session, w.slug);
      return { slug: w.slug, name: w.name, role: p.role, allowed: roleScopes(p.role), projects: await grantableProjects(sql, p) };
    }),
  );
  return { personName: who?.name ?? '', workspaces };
}

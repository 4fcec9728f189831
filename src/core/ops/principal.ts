import type { Db } from '../../db/connect.ts';
import { isClientRole, type MembershipFlag, type Principal } from '../auth/principal.ts';
import { sessionPrincipal, type Session } from '../auth/sessions.ts';

/**
 * The console's caller: the session's principal in one workspace, with its membership flags
 * (which mean something for workspace users only: a client user's stale flag is dropped), coming
 * through the console's door. The workspace is `slug` when given (a shared link names it), else the
 * first, by slug, where the person may use the console (owner, admin or billing operator), else
 * their first; null when the person belongs to no workspace (or not to `slug`).
 */
export async function opsPrincipal(sql: Db, session: Session, slug: string | null): Promise<Principal | null> {
  const [m] = await sql<{ slug: string; billingOperator: boolean }[]>`
    select w.slug, m.billing_operator as "billingOperator"
    from memberships m join workspaces w on w.id = m.workspace_id
    where m.identity_id = ${session.identityId} and m.deactivated_at is null ${slug ? sql`and w.slug = ${slug}` : sql``}
    order by (m.role in ('owner', 'admin') or (m.billing_operator and m.role not in ('client', 'client_elevated'))) desc, w.slug
    limit 1`;
  if (!m) return null;
  const p = await sessionPrincipal(sql, session, m.slug);
  const flags = new Set<MembershipFlag>(m.billingOperator && !isClientRole(p.role) ? ['billingOperator'] : []);
  return { ...p, door: 'console', flags };
}

import { randomUUID } from 'node:crypto';
import type { Principal } from '../../src/core/auth/principal.ts';
import type { Ctx } from '../../src/core/ctx.ts';
import type { Db } from '../../src/db/connect.ts';
import type { Person, Workspace } from './factories.ts';

/**
 * A core context as the console builds it for a workspace admin signed in a moment ago (session,
 * recent re-authentication): how the job-page tests call the console's operations directly.
 */
export function consoleAdminCtx(sql: Db, side: { ws: Workspace; admin: Person }, over: Partial<Principal> = {}, extra: Partial<Ctx> = {}): Ctx {
  const principal: Principal = {
    workspaceId: side.ws.id,
    slug: side.ws.slug,
    identityId: side.admin.id,
    name: side.admin.email,
    role: 'admin',
    clientId: null,
    via: 'session',
    scopes: new Set(['read', 'write', 'triage']),
    projectIds: null,
    tokenId: null,
    tokenKind: null,
    sessionId: randomUUID(),
    reauthAt: new Date(),
    source: 'ui',
    door: 'console',
    ...over,
  };
  return { sql, principal, now: () => new Date(), ...extra };
}

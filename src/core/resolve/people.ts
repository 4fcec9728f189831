import { isClientRole } from '../auth/principal.ts';
import type { Ctx } from '../ctx.ts';
import { invalid, notFound, type AppError } from '../errors.ts';
import { ambiguousName, fold, isUuid, MAX_CHOICES, unknownName } from './common.ts';

/**
 * `unknown_person`, with one rule for its status, read from the contract: a person id given as
 * the value of a ticket field (`assigneeId` on create, update and move; the `assigneeId`,
 * `reporterId` and `viewerId` filters over the same fields) fails validation like `unknown_kind`:
 * 400 `invalid` with `field`. A person the operation acts on or for (a viewer to add or mention,
 * the user whose time or settings are asked for, a token's agent, a category's member) is a
 * missing resource: 404 `not_found`. A typed name that matches nobody is resolvePersonId's 400.
 */
export function unknownPerson(as: 'fieldValue' | 'subject', details: Record<string, unknown>, message = 'No such person in this workspace.'): AppError {
  return as === 'fieldValue' ? invalid('unknown_person', details, message) : notFound('unknown_person', details, message);
}

interface Person {
  id: string;
  name: string;
  email: string | null;
}

/**
 * A person of the workspace by id, email or exact name (case-insensitive), or `me` -> identity id.
 * Ids pass through (the operation checks them). A deactivated member is not found (unknown, not a
 * choice) unless `history` is set: no new assignee, mention or viewer may name them, while a
 * filter over past work (tickets they were assigned, their time) still may. An unknown email or name is 400 `unknown_person`;
 * a name two people share is 400 `ambiguous_person` listing them. Choices list workspace users
 * (never client people) and only to workspace users: a client user does not learn who works here.
 */
export async function resolvePersonId(ctx: Ctx, value: string, field: string, opts: { history?: boolean } = {}): Promise<string> {
  const p = ctx.principal;
  if (fold(value) === 'me') return p.identityId;
  if (isUuid(value)) return value.toLowerCase();
  const { sql } = ctx;
  const v = fold(value);
  const byEmail = v.includes('@');
  const hits = await sql<Person[]>`
    select i.id, person_name(m.workspace_id, i.id, i.name) as name, i.email from memberships m join identities i on i.id = m.identity_id
    where m.workspace_id = ${p.workspaceId} ${opts.history ? sql`` : sql`and m.deactivated_at is null`}
      and ${byEmail ? sql`lower(i.email) = ${v}` : sql`lower(regexp_replace(trim(person_name(m.workspace_id, i.id, i.name)), '\\s+', ' ', 'g')) = ${v}`}
    order by name, i.id
    limit ${MAX_CHOICES}`;
  if (hits.length === 1) return hits[0]!.id;
  if (hits.length > 1) throw ambiguousName('ambiguous_person', field, value, hits);
  throw unknownName('unknown_person', field, value, isClientRole(p.role) ? [] : await staffChoices(ctx, opts));
}

/** Several people (mentions), in order. */
export async function resolvePersonIds(ctx: Ctx, values: readonly string[], field: string): Promise<string[]> {
  return Promise.all(values.map((v, i) => resolvePersonId(ctx, v, `${field}.${i}`)));
}

async function staffChoices(ctx: Ctx, opts: { history?: boolean }): Promise<Person[]> {
  const { sql, principal: p } = ctx;
  return sql<Person[]>`
    select i.id, i.name, i.email from memberships m join identities i on i.id = m.identity_id
    where m.workspace_id = ${p.workspaceId} and m.role in ('owner', 'admin', 'member', 'agent') ${opts.history ? sql`` : sql`and m.deactivated_at is null`}
    order by i.name, i.id
    limit ${MAX_CHOICES + 1}`;
}

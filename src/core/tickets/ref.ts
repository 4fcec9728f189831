import type { Db } from '../../db/connect.ts';
import { invalid } from '../errors.ts';
import { UUID_PATTERN } from '../validation.ts';
import type { Fragment } from './summary.ts';

export type TicketRef = { kind: 'id'; id: string } | { kind: 'human'; prefix: string; number: number } | { kind: 'none' };

/** The longest `{ref}` read: longer is a 400 `ref_too_long` (the OpenAPI document publishes it as the parameter's maxLength). */
export const MAX_REF_LENGTH = 60;

const HUMAN = /^([A-Za-z][A-Za-z0-9]{0,19})-(\d{1,9})$/;

/** A human id `PREFIX-N`, for input schemas that take one beside a UUID. */
export const HUMAN_ID_PATTERN = HUMAN;

/**
 * Parses a `{ref}`: a ticket UUID, or a human id `PREFIX-N` (case-insensitive; any prefix
 * the project ever had, `INBOX` for the Inbox). Over 60 characters is a 400; anything else
 * that cannot name a ticket resolves to nothing (a 404 later).
 */
export function parseTicketRef(raw: string): TicketRef {
  if (raw.length > MAX_REF_LENGTH) throw invalid('ref_too_long', { field: 'ref' }, `A ticket reference is at most ${MAX_REF_LENGTH} characters.`);
  if (UUID_PATTERN.test(raw)) return { kind: 'id', id: raw.toLowerCase() };
  const human = parseHumanId(raw);
  return human ? { kind: 'human', ...human } : { kind: 'none' };
}

/** A human id `PREFIX-N` (prefix upper-cased), or null when `raw` is not one. */
export function parseHumanId(raw: string): { prefix: string; number: number } | null {
  const m = HUMAN.exec(raw);
  return m ? { prefix: m[1]!.toUpperCase(), number: Number(m[2]) } : null;
}

/**
 * The id of the ticket a human id names in the workspace, as a subquery: every number and prefix
 * a ticket ever had keeps resolving (ticket_refs, project_prefixes); `INBOX` is the Inbox.
 */
export function humanIdTicketSql(sql: Db, workspaceId: string, human: { prefix: string; number: number }): Fragment {
  return human.prefix === 'INBOX'
    ? sql`select tr.ticket_id from ticket_refs tr where tr.workspace_id = ${workspaceId} and tr.project_id is null and tr.number = ${human.number}`
    : sql`select tr.ticket_id from project_prefixes pp join ticket_refs tr on tr.workspace_id = pp.workspace_id and tr.project_id = pp.project_id
          where pp.workspace_id = ${workspaceId} and pp.prefix = ${human.prefix} and tr.number = ${human.number}`;
}

/**
 * The id of the ticket a `{ref}` (UUID or human id) names, as a SQL value: for a query that needs
 * it beside loadTicket's, in the same round trip. A ref naming nothing is null.
 */
export function ticketIdSql(sql: Db, workspaceId: string, ref: string): Fragment {
  const r = parseTicketRef(ref);
  if (r.kind === 'id') return sql`${r.id}::uuid`;
  return r.kind === 'human' ? sql`(${humanIdTicketSql(sql, workspaceId, r)})` : sql`null::uuid`;
}

export function humanId(projectKey: string | null, number: number): string {
  return `${projectKey ?? 'INBOX'}-${number}`;
}

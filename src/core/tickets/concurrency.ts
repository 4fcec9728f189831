import type { Db } from '../../db/connect.ts';
import { notFound, preconditionFailed } from '../errors.ts';
import { ticketEtag } from './etag.ts';
import type { TicketFacts } from '../access/facts.ts';

/**
 * Optimistic concurrency for ticket writes. Called inside the write's transaction with the
 * ticket row locked, so of two writers sending the same If-Match exactly one passes: the second
 * waits for the lock and then sees the `updatedAt` the first one moved.
 * If-Match uses the strong comparison (RFC 9110): a weak tag `W/"..."` never matches; `*` matches
 * any existing ticket. No header: no check.
 */
export function assertIfMatch(t: Pick<TicketFacts, 'id' | 'updatedAt'>, header: string | null | undefined): void {
  if (header === undefined || header === null || header.trim() === '') return;
  const etag = ticketEtag(t);
  const ok = header.split(',').some((raw) => {
    const tag = raw.trim();
    return tag === '*' || tag === etag;
  });
  if (!ok) throw preconditionFailed(etag);
}

/**
 * Keeps tickets from being deleted until the transaction ends. Every write that inserts a row
 * pointing at a ticket (a link, a parent, a child, a code-host reference, a viewer, an
 * attachment, a timeline event) calls it after its checks and before inserting; otherwise a
 * DELETE committed in between turns the insert into a foreign-key violation.
 *
 * `for key share` conflicts only with DELETE (and `for update`), not with other writers, so it
 * costs nothing on a live ticket. A DELETE already under way makes this wait; once it commits
 * the row is gone and the writer answers 404 `not_found`, as if it had come second. A DELETE
 * that comes later waits for the writer and then cascades what it added. Take it before any
 * stronger row lock of the same transaction: a deleter's only conflicting lock is the one on
 * its own ticket, so a writer holding nothing stronger cannot be part of a deadlock with it.
 */
export async function holdTickets(sql: Db, ids: readonly string[]): Promise<void> {
  const wanted = [...new Set(ids)];
  const rows = await sql`select id from tickets where id = any(${wanted}::uuid[]) order by id for key share`;
  if (rows.length < wanted.length) throw notFound(undefined, undefined, 'No such ticket.');
}

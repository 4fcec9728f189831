import { preconditionFailed } from '../errors.ts';
import { ticketEtag } from './etag.ts';
import type { TicketFacts } from './load.ts';

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

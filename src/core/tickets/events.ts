import type { Db } from '../../db/connect.ts';

/**
 * The closed list of timeline event kinds. Payloads:
 * - created: {}                                   - field_changed: { field, old, new }
 * - moved: { fromProjectId, toProjectId, fromHumanId, toHumanId }
 * - archived / restored: {}                       - redacted: { reason }
 * - parent_changed: { old, new }                  - link_added / link_removed: { linkId, kind, direction, otherId }
 * - comment_added / comment_edited / comment_deleted: { commentId, audience }
 * - attachment_added: { attachmentId, filename, audience } - viewer_added / viewer_removed: { identityId }
 *   (link direction: 'outgoing' on the link's source ticket, 'incoming' on its target; audience lets
 *   a reader hide events of internal comments and attachments from client users)
 * - codehost_added / codehost_removed: { linkId, repo, sha, pr }
 * - time_logged: { entryId, minutes, spentOn }
 * - time_edited: { entryId, fields }             - time_deleted: { entryId, minutes, spentOn }
 * - time_corrected: { entryId, correctsEntryId, minutes, spentOn } (entryId is the correction)
 * - time_reattributed: { billingClientId, updated }
 */
export const eventKinds = [
  'created',
  'field_changed',
  'moved',
  'archived',
  'restored',
  'redacted',
  'parent_changed',
  'link_added',
  'link_removed',
  'comment_added',
  'comment_edited',
  'comment_deleted',
  'attachment_added',
  'viewer_added',
  'viewer_removed',
  'codehost_added',
  'codehost_removed',
  'time_logged',
  'time_edited',
  'time_deleted',
  'time_corrected',
  'time_reattributed',
] as const;
export type EventKind = (typeof eventKinds)[number];

export interface NewEvent {
  workspaceId: string;
  ticketId: string;
  kind: EventKind;
  actorId: string | null;
  subject?: string | null;
  payload?: Record<string, unknown>;
}

/**
 * Appends timeline events and bumps each touched ticket's `updatedAt` in the same
 * statement batch. Every change to a ticket goes through here: it is what pollers rely on.
 */
/** How the ticket's `updated_at` moves with the events. */
export interface RecordOptions {
  /**
   * 'now' (default): an UPDATE in this statement, so the transaction reads its own new
   * `updatedAt`; the ticket's row stays locked until it ends. 'at_commit': moved while the
   * commit runs (sql/100_ticket_touch_at_commit.sql), the row locked only then: for writes that
   * read nothing of the ticket afterwards and that many people make on one ticket (time entries).
   */
  touch?: 'now' | 'at_commit';
  /**
   * Tickets whose `updated_at` the caller already set to what the touch would give: a ticket
   * inserted in this transaction with `updated_at = now + 1 ms` (createTicket). Saves an UPDATE
   * (and its statement triggers) of a row the same transaction just wrote.
   */
  touched?: readonly string[];
}

export async function recordEvents(sql: Db, events: NewEvent[], now: Date, opts: RecordOptions = {}): Promise<void> {
  if (events.length === 0) return;
  const ids = [...new Set(events.map((e) => e.ticketId))].sort();
  // The statements are sent together (one round trip; a connection runs them in the order they
  // are started, here by Promise.all below): each round trip costs both processes CPU, which is
  // what 200 clients queue for.
  const statements: Promise<unknown>[] = [];
  // before the events: at commit the ticket's row is then taken before the change feed's lock
  if (opts.touch === 'at_commit') {
    statements.push(sql`
      insert into ticket_touch_pending as p (ticket_id, at) select unnest(${ids}::uuid[]), ${now}::timestamptz
      on conflict (xid, ticket_id) do update set at = greatest(p.at, excluded.at)`);
  }
  statements.push(sql`
    insert into ticket_events (workspace_id, ticket_id, kind, actor_id, subject, payload, created_at)
    select w, t, k, a, s, p::jsonb, ${now}::timestamptz
    from unnest(${events.map((e) => e.workspaceId)}::uuid[], ${events.map((e) => e.ticketId)}::uuid[], ${events.map((e) => e.kind)}::text[],
                ${events.map((e) => e.actorId)}::uuid[], ${events.map((e) => e.subject ?? null)}::text[],
                -- text[], then cast: a jsonb[] parameter makes postgres.js encode each string again (a JSON string, not an object)
                ${events.map((e) => JSON.stringify(e.payload ?? {}))}::text[]) with ordinality as e(w, t, k, a, s, p, n)
    order by n`);
  const touched = new Set(opts.touched);
  const stale = ids.filter((id) => !touched.has(id));
  if (opts.touch !== 'at_commit' && stale.length > 0) {
    // Whole milliseconds: the contract shows updatedAt with milliseconds, so each change must move it
    // by at least one for pollers and the ETag (id + updatedAt) to tell two versions apart.
    statements.push(sql`update tickets set updated_at = greatest(${now}, updated_at + interval '1 millisecond') where id = any(${stale}::uuid[])`);
  }
  await Promise.all(statements);
}

export async function recordEvent(sql: Db, event: NewEvent, now: Date, opts: RecordOptions = {}): Promise<void> {
  await recordEvents(sql, [event], now, opts);
}

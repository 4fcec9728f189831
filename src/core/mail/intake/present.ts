import type { Db } from '../../../db/connect.ts';

/** The contract's Mailbox: the settings and the intake's state, never the password. */
export interface Mailbox {
  host: string;
  port: number;
  secure: boolean;
  user: string;
  folder: string;
  afterImport: 'seen' | 'move';
  moveTo: string | null;
  enabled: boolean;
  /** The receiving server whose Authentication-Results header proves senders (its authserv-id); null: none. */
  trustedAuthservId: string | null;
  uidValidity: number | null;
  lastUid: number;
  lastPollAt: string | null;
  lastError: string | null;
  counts: { imported: number; replies: number; ignored: number; quarantined: number };
}

/** What a sealed mailbox password is bound to: it opens for this workspace's mailbox only. */
export const passwordContext = (workspaceId: string) => `mailbox:${workspaceId}`;

/** The workspace's Mailbox, or null when it has none. The column list names every column read: never the password. */
export async function presentMailbox(sql: Db, workspaceId: string): Promise<Mailbox | null> {
  const [row] = await sql<(Omit<Mailbox, 'lastPollAt' | 'counts'> & { lastPollAt: Date | null; counts: Record<string, number> })[]>`
    select m.host, m.port, m.secure, m.username as user, m.folder, m.after_import as "afterImport", m.move_to as "moveTo", m.enabled, m.trusted_authserv_id as "trustedAuthservId",
           m.uid_validity::float8 as "uidValidity", m.last_uid::float8 as "lastUid", m.last_poll_at as "lastPollAt", m.last_error as "lastError",
           (select coalesce(json_object_agg(s.status, s.n), '{}'::json)
            from (select status, count(*)::int as n from intake_messages where workspace_id = m.workspace_id group by status) s) as counts
    from mailboxes m where m.workspace_id = ${workspaceId}`;
  if (!row) return null;
  const n = (status: string) => row.counts[status] ?? 0;
  return {
    ...row,
    lastPollAt: row.lastPollAt?.toISOString() ?? null,
    counts: { imported: n('imported'), replies: n('reply'), ignored: n('ignored'), quarantined: n('quarantined') },
  };
}

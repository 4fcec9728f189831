import type { Db } from '../../db/connect.ts';

/**
 * The workspace that sent the message with this Message-ID, from the database's own record of
 * what it sends (a delivery stores its Message-ID before the message goes out); null for a
 * message the service has no record of. Not from a header anyone could write into the message.
 * A new kind of outgoing mail that records its Message-ID is looked up here too.
 */
export async function outgoingWorkspace(sql: Db, messageId: string): Promise<string | null> {
  const [d] = await sql<{ workspaceId: string }[]>`
    select workspace_id as "workspaceId" from document_deliveries where message_id = ${messageId}
    union all select workspace_id from invitations where message_id = ${messageId}
    union all select workspace_id from password_resets where message_id = ${messageId}
    limit 1`;
  return d?.workspaceId ?? null;
}

import { randomUUID } from 'node:crypto';
import type { Db } from '../../db/connect.ts';
import { firstAddress } from './address.ts';

/** How one workspace's outgoing email shows its sender (src/core/workspaces/settings.ts). */
export interface WorkspaceSender {
  /** The From header: MAIL_FROM's address, under the workspace's sender name when it set one. */
  from: string;
  /** The workspace's Reply-To, or null. */
  replyTo: string | null;
  /** The workspace's name, what the text signs with. */
  name: string;
}

/** `"Name" <address>`, the name quoted (its quotes and backslashes escaped); settings refuse control characters in it. */
export function fromWithName(mailFrom: string, name: string | null): string {
  const address = firstAddress(mailFrom);
  if (!name || !address) return mailFrom;
  return `"${name.replace(/["\\]/g, (c) => `\\${c}`)}" <${address}>`;
}

/** The sender of the workspace's emails: MAIL_FROM's address with the workspace's name and reply-to. */
export async function workspaceSender(sql: Db, workspaceId: string, mailFrom: string): Promise<WorkspaceSender> {
  const [w] = await sql<{ name: string; mailFromName: string | null; mailReplyTo: string | null }[]>`
    select name, mail_from_name as "mailFromName", mail_reply_to as "mailReplyTo" from workspaces where id = ${workspaceId}`;
  return { from: fromWithName(mailFrom, w?.mailFromName ?? null), replyTo: w?.mailReplyTo ?? null, name: w?.name ?? '' };
}

/** `<uuid@domain of MAIL_FROM>`: ours, unique, stored before the message goes out. */
export function newMessageId(mailFrom: string): string {
  const domain = firstAddress(mailFrom)?.split('@')[1] || 'localhost';
  return `<${randomUUID()}@${domain}>`;
}

import type { Db } from '../../db/connect.ts';
import { passwordContext } from './intake/present.ts';
import type { SecretBox } from './secret-box.ts';

/** The process cannot open a stored mailbox password: it must not start and poll nothing in silence. */
export class SecretKeyMismatch extends Error {}

/**
 * Start-up check (issue 26): every stored mailbox password opens with this process's key. Moving
 * from the embedded default (key in DATA_DIR/secret.key) to DATABASE_URL without WT_SECRET_KEY, or
 * with another key, used to leave mail intake failing quietly in the worker's log; now the process
 * stops at start with one message naming the workspaces and the way out.
 */
export async function assertMailboxKey(sql: Db, secrets: SecretBox | null): Promise<void> {
  const rows = await sql<{ slug: string; workspaceId: string; sealed: Uint8Array }[]>`
    select w.slug, m.workspace_id as "workspaceId", m.password_sealed as sealed
    from mailboxes m join workspaces w on w.id = m.workspace_id
    order by w.slug`;
  if (!rows.length) return;
  const how =
    'set WT_SECRET_KEY to the key they were stored with (the embedded default keeps it in DATA_DIR/secret.key: `npx wt embedded-env` prints it), or store the mailbox passwords again';
  if (!secrets) {
    throw new SecretKeyMismatch(`Mailboxes exist (workspaces ${rows.map((r) => r.slug).join(', ')}) but no WT_SECRET_KEY is set: ${how}.`);
  }
  const closed = rows.filter((r) => {
    try {
      secrets.open(r.sealed, passwordContext(r.workspaceId));
      return false;
    } catch {
      return true;
    }
  });
  if (closed.length) {
    throw new SecretKeyMismatch(
      `The secret key (WT_SECRET_KEY, or DATA_DIR/secret.key on the embedded default) cannot open the stored mailbox password of workspaces ${closed.map((r) => r.slug).join(', ')}: ${how}.`,
    );
  }
}

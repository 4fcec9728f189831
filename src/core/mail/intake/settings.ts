import { z } from 'zod';
import { tx, type Ctx } from '../../ctx.ts';
import { invalid, notFound } from '../../errors.ts';
import { requireAllowedHost } from '../../net/outbound.ts';
import { defineOp } from '../../operation.ts';
import type { MailboxMachinery } from '../machinery.ts';
import { secretKeyMissing } from '../secret-box.ts';
import { passwordContext, presentMailbox, type Mailbox } from './present.ts';
import { mailboxSchema } from './schema.ts';

export const setMailboxInput = z.object({
  host: z
    .string()
    .trim()
    .min(1)
    .max(255)
    .regex(/^[A-Za-z0-9._:[\]-]+$/, 'a host name or an IP address')
    .describe('IMAP server: a public host name or IP address (private, link-local, metadata: 400 host_not_allowed; loopback only when allowed).'),
  port: z.number().int().min(1).max(65535).describe('IMAP port: 993 with secure, 143 without.'),
  secure: z.boolean().describe('true: TLS from the first byte (port 993); false: plain, upgraded with STARTTLS when the server offers it.'),
  user: z.string().min(1).max(320).describe('Login name of the mailbox.'),
  password: z
    .string()
    .min(1)
    .max(1000)
    .optional()
    .describe('Password of the mailbox; required when creating it and when host, port or user change, otherwise omit it to keep the stored one.'),
  folder: z.string().trim().min(1).max(255).default('INBOX').describe('The folder read (default INBOX).'),
  afterImport: z.enum(['seen', 'move']).default('seen').describe('What happens to a handled message: flagged \\Seen, or moved to `moveTo`.'),
  moveTo: z
    .string()
    .trim()
    .min(1)
    .max(255)
    .nullable()
    .optional()
    .describe('Folder handled messages are moved to (created when missing); required with afterImport "move".'),
  enabled: z.boolean().default(true).describe('Whether the mailbox is polled every minute.'),
  trustedAuthservId: z
    .string()
    .trim()
    .min(1)
    .max(255)
    .regex(/^[A-Za-z0-9._-]+$/, 'an authserv-id: a host name')
    .nullable()
    .optional()
    .describe(
      'The authserv-id of the receiving mail server whose Authentication-Results header proves senders (dkim/dmarc=pass); only the topmost ones it added are read. Omitted or null: none is trusted, the intake checks DKIM itself.',
    ),
});

const noMailbox = () => notFound('no_mailbox', undefined, 'This workspace has no mailbox.');

/** The mailbox machinery the composition root put on the context; without it a mailbox cannot be written (a wiring bug, 500). */
function machineryOf(ctx: Ctx): MailboxMachinery {
  if (!ctx.mailbox) throw new Error('mailbox settings need the mailbox machinery on the context (Services.mailbox)');
  return ctx.mailbox;
}

/** GET /mailbox: Owner/Admin from a browser session; 404 `no_mailbox` when none is set. */
export const getMailbox = defineOp({
  name: 'mailbox.read',
  action: 'mailbox.read',
  input: z.object({}),
  output: mailboxSchema,
  run: async (ctx): Promise<Mailbox> => {
    const mailbox = await presentMailbox(ctx.sql, ctx.principal.workspaceId);
    if (!mailbox) throw noMailbox();
    return mailbox;
  },
});

/**
 * PUT /mailbox: creates or replaces the workspace's one mailbox. The password is sealed with the
 * process's key (503 `secret_key_missing` without one) and never answered. It may be left out to
 * keep the stored one, except when creating and when host, port or user change (400
 * `password_required`): the stored password is never sent to a server it was not given for.
 * A new server, account or folder starts over: the next poll scans the folder's unseen messages
 * (the dedupe keys keep anything from being imported twice). The host passes the outbound guard
 * (400 `host_not_allowed`: loopback unless allowed, private, link-local, metadata); the poll
 * checks it again when it connects, since what a name resolves to can change. The host is checked
 * (a DNS lookup) before the transaction opens, so no row lock waits on the resolver.
 */
export const setMailbox = defineOp({
  name: 'mailbox.write',
  action: 'mailbox.write',
  input: setMailboxInput,
  output: mailboxSchema,
  run: async (ctx, body): Promise<Mailbox> => {
    const { secrets, outbound } = machineryOf(ctx);
    const moveTo = body.afterImport === 'move' ? (body.moveTo ?? null) : null;
    if (body.afterImport === 'move' && !moveTo) throw invalid('move_to_required', { field: 'moveTo' }, 'Name the folder handled messages are moved to.');
    if (moveTo === body.folder) throw invalid('move_to_same_folder', { field: 'moveTo' }, 'Handled messages must move to another folder than the one read.');
    await requireAllowedHost(outbound, body.host, 'host');
    return tx(ctx, async (ctx) => {
      const { sql, principal: p } = ctx;
      const [current] = await sql<{ host: string; port: number; username: string; folder: string }[]>`
        select host, port, username, folder from mailboxes where workspace_id = ${p.workspaceId} for update`;
      const account = !current || current.host !== body.host || current.port !== body.port || current.username !== body.user;
      if (account && body.password === undefined) {
        throw invalid('password_required', { field: 'password' }, 'Give the password: the mailbox is new, or its server or account changed.');
      }
      let sealed: Buffer | null = null;
      if (body.password !== undefined) {
        if (!secrets) throw secretKeyMissing();
        sealed = secrets.seal(body.password, passwordContext(p.workspaceId));
      }
      const now = ctx.now();
      if (!current) {
        await sql`
          insert into mailboxes (workspace_id, host, port, secure, username, password_sealed, folder, after_import, move_to, enabled, trusted_authserv_id,
                                 created_at, updated_at)
          values (${p.workspaceId}, ${body.host}, ${body.port}, ${body.secure}, ${body.user}, ${sealed}, ${body.folder}, ${body.afterImport}, ${moveTo},
                  ${body.enabled}, ${body.trustedAuthservId ?? null}, ${now}, ${now})`;
      } else {
        const restart = account || current.folder !== body.folder;
        await sql`
          update mailboxes set host = ${body.host}, port = ${body.port}, secure = ${body.secure}, username = ${body.user},
                 password_sealed = coalesce(${sealed}::bytea, password_sealed), folder = ${body.folder}, after_import = ${body.afterImport},
                 move_to = ${moveTo}, enabled = ${body.enabled}, trusted_authserv_id = ${body.trustedAuthservId ?? null}, updated_at = ${now},
                 ${restart ? sql`settings_version = settings_version + 1, uid_validity = null, last_uid = 0,` : sql``}
                 last_error = ${restart || sealed !== null ? null : sql`last_error`}
          where workspace_id = ${p.workspaceId}`;
      }
      return (await presentMailbox(sql, p.workspaceId))!;
    });
  },
});

/** DELETE /mailbox: polling stops; the intake log stays (its dedupe keys too, should the mailbox be connected again). */
export const deleteMailbox = defineOp({
  name: 'mailbox.delete',
  action: 'mailbox.write',
  input: z.object({}),
  output: null,
  run: async (ctx): Promise<void> => {
    const rows = await ctx.sql`delete from mailboxes where workspace_id = ${ctx.principal.workspaceId} returning id`;
    if (rows.length === 0) throw noMailbox();
  },
});

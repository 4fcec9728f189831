import { z } from 'zod';
import { invalid } from '../errors.ts';
import { singleAddress } from '../mail/address.ts';
import { defineOp } from '../operation.ts';
import { idField, withReasons } from '../validation.ts';
import type { Ctx } from '../ctx.ts';
import { clientIdInput } from './get.ts';
import { loadClient } from './read.ts';
import { recipientListSchema, type Recipient } from './schema.ts';

/** Recipients one client may have: each is one email per timesheet. */
export const MAX_RECIPIENTS = 50;

const recipientInput = z.object({
  email: z
    .string()
    .trim()
    .max(254)
    .nullish()
    .describe('One bare email address (no name, list or line break); may be left out when identityId names a client user with an address.'),
  name: z.string().trim().min(1).max(200).nullish().describe('Name shown in the email greeting; default: the client user’s name, if any.'),
  optedOut: z.boolean().default(false).describe('true: listed but sent nothing (the delivery is recorded as skipped).'),
  identityId: z.uuid().toLowerCase().nullish().describe('A client user of this client who is this recipient (a billing contact with a login).'),
});

export const setRecipientsInput = withReasons(
  z.object({
    id: idField('The client.'),
    recipients: z.array(recipientInput).max(MAX_RECIPIENTS).describe(`The whole set, at most ${MAX_RECIPIENTS}; replaces the current one.`),
  }),
  { id: 'bad_uuid' },
);

const recipientColumns = (ctx: Ctx) => ctx.sql`r.id, r.email, r.name, r.opted_out as "optedOut", r.identity_id as "identityId"`;

async function selectRecipients(ctx: Ctx, clientId: string): Promise<Recipient[]> {
  return ctx.sql<Recipient[]>`
    select ${recipientColumns(ctx)} from client_billing_recipients r where r.client_id = ${clientId} order by r.created_at, r.id`;
}

/** GET /clients/{id}/recipients (Owner/Admin): who receives the client's timesheets, in the order they are sent. */
export const listRecipients = defineOp({
  name: 'clients.recipients.list',
  action: 'clients.recipients.list',
  input: clientIdInput,
  output: recipientListSchema,
  run: async (ctx, { id }) => {
    await loadClient(ctx, id);
    return { recipients: await selectRecipients(ctx, id) };
  },
});

interface ClientUserRow {
  id: string;
  email: string | null;
  name: string;
}

/**
 * PUT /clients/{id}/recipients (Owner/Admin): replaces the client's billing recipients. Each address
 * is read with the mailer's own parser (singleAddress): anything but one bare address is 400
 * `recipient_address`, naming the entry; an address twice is 400 `recipient_duplicate`; an
 * identityId that is not a user of this client is 400 `recipient_not_client_user`. A recipient whose
 * address stays keeps its row (past deliveries still name it); one left out is removed (its past
 * deliveries keep their address).
 */
export const setRecipients = defineOp({
  name: 'clients.recipients.set',
  action: 'clients.recipients.set',
  input: setRecipientsInput,
  output: recipientListSchema,
  tx: true,
  audit: {
    action: 'clients.recipients.set',
    target: (s) => (typeof s.id === 'string' ? s.id : null),
    detail: (_i, r: { recipients: Recipient[] }) => `${r.recipients.length} recipient(s)`,
  },
  run: async (ctx, input): Promise<{ recipients: Recipient[] }> => {
    const { sql, principal: p } = ctx;
    await loadClient(ctx, input.id, { lock: true });
    const ids = [...new Set(input.recipients.flatMap((r) => (r.identityId ? [r.identityId] : [])))];
    const users = new Map(
      (
        await sql<ClientUserRow[]>`
          select i.id, i.email, person_name(m.workspace_id, i.id, i.name) as name from memberships m join identities i on i.id = m.identity_id
          where m.workspace_id = ${p.workspaceId} and m.client_id = ${input.id} and i.id = any(${ids}::uuid[])`
      ).map((u) => [u.id, u]),
    );
    const wanted = input.recipients.map((r, i) => {
      const user = r.identityId ? users.get(r.identityId) : undefined;
      if (r.identityId && !user) {
        throw invalid('recipient_not_client_user', { field: `recipients.${i}.identityId` }, 'This person is not a user of this client.');
      }
      const raw = r.email || user?.email || null;
      const email = singleAddress(raw);
      if (!email) {
        throw invalid('recipient_address', { field: `recipients.${i}.email` }, 'A billing recipient is one bare email address (no list, name or line break).');
      }
      return { email, name: r.name ?? user?.name ?? null, optedOut: r.optedOut, identityId: r.identityId ?? null };
    });
    const seen = new Set<string>();
    wanted.forEach((r, i) => {
      const key = r.email.toLowerCase();
      if (seen.has(key)) throw invalid('recipient_duplicate', { field: `recipients.${i}.email` }, `${r.email} is listed twice.`);
      seen.add(key);
    });
    const current = await sql<{ id: string; email: string | null }[]>`select id, email from client_billing_recipients where client_id = ${input.id}`;
    const byEmail = new Map(current.flatMap((c) => (c.email ? [[c.email.toLowerCase(), c.id] as const] : [])));
    const kept = new Set<string>();
    for (const r of wanted) {
      const id = byEmail.get(r.email.toLowerCase());
      if (id && !kept.has(id)) {
        kept.add(id);
        await sql`update client_billing_recipients set email = ${r.email}, name = ${r.name}, opted_out = ${r.optedOut}, identity_id = ${r.identityId} where id = ${id}`;
      } else {
        const [row] = await sql<{ id: string }[]>`
          insert into client_billing_recipients (client_id, email, name, opted_out, identity_id, created_at)
          values (${input.id}, ${r.email}, ${r.name}, ${r.optedOut}, ${r.identityId}, clock_timestamp()) returning id`;
        kept.add(row!.id);
      }
    }
    await sql`delete from client_billing_recipients where client_id = ${input.id} and id <> all(${[...kept]}::uuid[])`;
    return { recipients: await selectRecipients(ctx, input.id) };
  },
});

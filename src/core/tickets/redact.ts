import type { Db } from '../../db/connect.ts';
import { authorize } from '../access/authorize.ts';
import { supersedeQuotingTimesheets } from '../documents/supersede.ts';
import { defineOp } from '../operation.ts';
import { recordEvent } from './events.ts';
import { loadTicket } from './load.ts';
import { redactedSchema } from './redact-schema.ts';
import { REDACTED, redactTicketInput } from './schemas.ts';

/** Timeline fields whose `field_changed` events quote descriptive content. */
const QUOTING_FIELDS = ['title', 'description', 'billingDescription'];

/**
 * POST /tickets/{id}/redact: Owner or Admin, from a browser session re-authenticated within ten
 * minutes; `ticketId` is the ticket UUID (anything else is 400 `bad_uuid`, never a human id that could be reused). A ticket the caller
 * cannot see is 404 before any role check. Everything descriptive the ticket holds becomes the
 * marker `[redacted]` or goes: see `redactContent`. A `redacted` event keeps the reason.
 * Every current timesheet that quoted the ticket is superseded by a new version, rendered by its
 * jobs from the redacted text; `runs` counts the billing runs affected.
 */
export const redactTicket = defineOp({
  name: 'tickets.redact',
  action: 'tickets.redact',
  input: redactTicketInput,
  output: redactedSchema,
  tx: true,
  run: async (ctx, input): Promise<{ ok: true; runs: number }> => {
    const { sql, principal: p } = ctx;
    const t = await loadTicket(ctx, input.id, { lock: true });
    authorize(ctx, 'tickets.redact', t);
    const now = ctx.now();
    await redactContent(sql, t.id, now);
    const runs = await supersedeQuotingTimesheets(sql, t.id);
    await recordEvent(sql, { workspaceId: t.workspaceId, ticketId: t.id, kind: 'redacted', actorId: p.identityId, payload: { reason: input.reason } }, now);
    return { ok: true, runs };
  },
});

/**
 * Replaces the free text of a ticket with the marker, wherever it is kept:
 * - title, description, billing description (when set), every comment body;
 * - time-entry notes on the ticket, billed and closed-period entries included: the rules that
 *   freeze an entry's work facts protect the figures, not text that has to go;
 * - attachments (the ticket's and its comments'): the rows and their bytes are deleted, so they
 *   are neither listed nor downloadable; their `attachment_added` events stay as the marker
 *   (filename `[redacted]`), so the timeline still shows that something was there;
 * - event payloads that quote text: `old`/`new` of `field_changed` on the quoting fields, the
 *   `filename` of `attachment_added`, and any event `subject`.
 * Ids, dates, minutes, states and code-host references are facts, not descriptive content, and stay.
 */
async function redactContent(sql: Db, ticketId: string, now: Date): Promise<void> {
  await sql`
    update tickets set title = ${REDACTED}, description = ${REDACTED}, redacted_at = ${now},
           billing_description = case when billing_description is null then null else ${REDACTED} end
    where id = ${ticketId}`;
  await sql`update comments set body = ${REDACTED}, updated_at = ${now} where ticket_id = ${ticketId} and body <> ${REDACTED}`;
  await sql`
    update time_entries set note = ${REDACTED}, updated_at = ${now}
    where ticket_id = ${ticketId} and note is not null and note <> ${REDACTED}`;
  await sql`delete from attachments where ticket_id = ${ticketId}`;
  const marker = sql`to_jsonb(${REDACTED}::text)`;
  const quoted = (key: string) => sql`case when payload->${key} = 'null'::jsonb then payload->${key} else ${marker} end`;
  const quotes = sql`(kind = 'field_changed' and payload->>'field' = any(${QUOTING_FIELDS}::text[]))`;
  await sql`
    update ticket_events
    set payload = case
          when ${quotes} then payload || jsonb_build_object('old', ${quoted('old')}, 'new', ${quoted('new')})
          when kind = 'attachment_added' then payload || jsonb_build_object('filename', ${marker})
          else payload end,
        subject = case when subject is null then null else ${REDACTED} end
    where ticket_id = ${ticketId} and (${quotes} or kind = 'attachment_added' or subject is not null)`;
}

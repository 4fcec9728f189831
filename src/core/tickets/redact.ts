import { requireRecentReauth } from '../auth/guards.ts';
import { tx, type Ctx } from '../ctx.ts';
import { recordEvent } from './events.ts';
import { loadTicket } from './load.ts';
import { parseTicketInput, REDACTED, redactTicketInput } from './schemas.ts';

/** Timeline fields whose `field_changed` events quote descriptive content. */
const QUOTING_FIELDS = ['title', 'description', 'billingDescription'];

/**
 * POST /tickets/{id}/redact: Owner or Admin, from a browser session re-authenticated within ten
 * minutes; `ticketId` is the ticket UUID (the route refuses anything else). Title, description,
 * billing description and every comment body become `[redacted]`, and so do the old and new
 * values that earlier `field_changed` events quoted from them; a `redacted` event keeps the reason.
 * `runs` counts the billing runs whose documents were superseded by re-rendering; there are no
 * billing documents yet, so it is 0 (the billing area adds the re-rendering here).
 */
export async function redactTicket(ctx: Ctx, ticketId: string, raw: unknown): Promise<{ ok: true; runs: number }> {
  requireRecentReauth(ctx.principal, ctx.now());
  const input = parseTicketInput(redactTicketInput, raw);
  return tx(ctx, async (ctx) => {
    const { sql, principal: p } = ctx;
    const t = await loadTicket(ctx, ticketId, { lock: true });
    const now = ctx.now();
    await sql`
      update tickets set title = ${REDACTED}, description = ${REDACTED}, redacted_at = ${now},
             billing_description = case when billing_description is null then null else ${REDACTED} end
      where id = ${t.id}`;
    await sql`update comments set body = ${REDACTED}, updated_at = ${now} where ticket_id = ${t.id} and body <> ${REDACTED}`;
    await sql`
      update ticket_events
      set payload = payload || jsonb_build_object(
            'old', case when payload->'old' = 'null'::jsonb then payload->'old' else to_jsonb(${REDACTED}::text) end,
            'new', case when payload->'new' = 'null'::jsonb then payload->'new' else to_jsonb(${REDACTED}::text) end)
      where ticket_id = ${t.id} and kind = 'field_changed' and payload->>'field' = any(${QUOTING_FIELDS}::text[])`;
    await recordEvent(sql, { workspaceId: t.workspaceId, ticketId: t.id, kind: 'redacted', actorId: p.identityId, payload: { reason: input.reason } }, now);
    return { ok: true, runs: 0 };
  });
}

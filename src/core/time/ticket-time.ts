import { isClientRole } from '../auth/principal.ts';
import type { Ctx } from '../ctx.ts';
import type { TicketFacts } from '../access/facts.ts';

/** The TicketPage `time` object. `loggedMinutes` is an internal figure, absent for client users. */
export interface TicketTime {
  loggedMinutes?: number;
  billableMinutes: number;
  unbilledMinutes: number;
}

/**
 * The TicketPage `time` object for a ticket the caller can already see (`facts` from loadTicket).
 * All figures are nets: corrections count with their sign.
 * - Workspace users: loggedMinutes (all entries), billableMinutes, unbilledMinutes (billable, not yet billed).
 * - Elevated client users on a ticket of their client's project: billableMinutes and unbilledMinutes
 *   of the entries billed to their own client only; never loggedMinutes.
 * - Any other client user: null (they cannot read time).
 */
export async function ticketTime(ctx: Ctx, ticketId: string, facts: Pick<TicketFacts, 'clientOnProject'>): Promise<TicketTime | null> {
  const p = ctx.principal;
  const client = isClientRole(p.role);
  if (client && !(p.role === 'client_elevated' && facts.clientOnProject)) return null;
  const [row] = await ctx.sql<{ logged: number; billable: number; unbilled: number }[]>`
    select coalesce(sum(e.minutes), 0)::int as logged,
           coalesce(sum(e.minutes) filter (where e.billable), 0)::int as billable,
           coalesce(sum(e.minutes) filter (where e.billable and not e.billed), 0)::int as unbilled
    from time_entries e
    where e.ticket_id = ${ticketId}${client ? ctx.sql` and e.billing_client_id = ${p.clientId}` : ctx.sql``}`;
  const { logged, billable, unbilled } = row!;
  return client ? { billableMinutes: billable, unbilledMinutes: unbilled } : { loggedMinutes: logged, billableMinutes: billable, unbilledMinutes: unbilled };
}

import { isClientRole } from '../auth/principal.ts';
import type { Ctx } from '../ctx.ts';
import type { TicketFacts } from '../access/facts.ts';
import type { Fragment } from '../tickets/summary.ts';

/** The TicketPage `time` object. `loggedMinutes` is an internal figure, absent for client users. */
export interface TicketTime {
  loggedMinutes?: number;
  billableMinutes: number;
  unbilledMinutes: number;
}

/**
 * The TicketPage `time` object of a ticket the caller can already see (`facts` from loadTicket),
 * as a SQL json expression over ticket id `ticketId` (SQL null when the caller may read none), so
 * the page selects it in its own statement. All figures are nets: corrections count with their sign.
 * - Workspace users: loggedMinutes (all entries), billableMinutes, unbilledMinutes (billable, not yet billed).
 * - Elevated client users on a ticket of their client's project: billableMinutes and unbilledMinutes
 *   of the entries billed to their own client only; never loggedMinutes.
 * - Any other client user: null (they cannot read time).
 */
export function ticketTimeSql(ctx: Ctx, ticketId: Fragment, facts: Pick<TicketFacts, 'clientOnProject'>): Fragment {
  const { sql, principal: p } = ctx;
  const client = isClientRole(p.role);
  if (client && !(p.role === 'client_elevated' && facts.clientOnProject)) return sql`null::json`;
  const billable = sql`'billableMinutes', coalesce(sum(e.minutes) filter (where e.billable), 0)::int,
                       'unbilledMinutes', coalesce(sum(e.minutes) filter (where e.billable and not e.billed), 0)::int`;
  return sql`(select ${client ? sql`json_build_object(${billable})` : sql`json_build_object('loggedMinutes', coalesce(sum(e.minutes), 0)::int, ${billable})`}
              from time_entries e
              where e.ticket_id = ${ticketId}${client ? sql` and e.billing_client_id = ${p.clientId}` : sql``})`;
}

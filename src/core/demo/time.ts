import type { Db } from '../../db/connect.ts';
import { addDays, monthEnd, monthStart } from '../time/dates.ts';

interface DemoTimeInput {
  workspaceId: string;
  now: Date;
  /** Who logs the demo time: the member and the admin. */
  people: { member: string; admin: string };
  clients: { globex: string; initech: string };
}

/**
 * Time for the demo's billing: last month's period closed and holding billable time on both
 * clients, the current month open. Globex's WEB tickets are billed by period (one drawing on a
 * "Support retainer" bank with a deposit, one `free` warranty fix); Initech's APP project is
 * billed on close (one ticket closed last month, so its time is billed; one still open, so it
 * waits). A billing run over last month can be started at once (`wt billing run`).
 */
export async function seedDemoTime(sql: Db, d: DemoTimeInput): Promise<void> {
  const today = d.now.toISOString().slice(0, 10);
  const thisMonth = monthStart(today);
  const lastMonth = monthStart(addDays(thisMonth, -1));
  const day = (n: number) => addDays(lastMonth, n - 1);
  const [last] = await sql<{ id: string }[]>`
    insert into periods (workspace_id, period_start, period_end, closed_at, closed_by)
    values (${d.workspaceId}, ${lastMonth}::date, ${monthEnd(lastMonth)}::date, ${d.now}, ${d.people.admin}) returning id`;
  await sql`insert into periods (workspace_id, period_start, period_end) values (${d.workspaceId}, ${thisMonth}::date, ${monthEnd(thisMonth)}::date)`;

  const [bank] = await sql<{ id: string }[]>`
    insert into banks (workspace_id, client_id, name, created_by) values (${d.workspaceId}, ${d.clients.globex}, 'Support retainer', ${d.people.admin}) returning id`;
  await sql`insert into bank_deposits (bank_id, minutes, deposited_on, note, created_by)
            values (${bank!.id}, 1200, ${lastMonth}::date, '20 hours prepaid', ${d.people.admin})`;

  const tickets = await sql<{ id: string; key: string; number: number; closed: boolean }[]>`
    select t.id, p.key, t.number, s.category = 'closed' as closed
    from tickets t join projects p on p.id = t.project_id join workflow_states s on s.id = t.state_id
    where t.workspace_id = ${d.workspaceId} and p.key in ('WEB', 'APP') order by p.key, t.number`;
  const web = tickets.filter((t) => t.key === 'WEB');
  const app = tickets.filter((t) => t.key === 'APP');
  const [paid, alsoPaid, free, banked] = [web[0]!, web[1]!, web[2]!, web[3]!];
  const [appDone, appOpen] = [app.find((t) => t.closed) ?? app[0]!, app.find((t) => !t.closed) ?? app[1]!];
  await sql`update tickets set billing_policy = 'free', billing_description = 'Warranty fix (no charge)' where id = ${free.id}`;
  await sql`update tickets set billing_policy = ${`bank:${bank!.id}`} where id = ${banked.id}`;
  await sql`
    update tickets set state_id = (select id from workflow_states where workspace_id = ${d.workspaceId} and category = 'closed' order by position limit 1),
                       closed_at = ${`${day(20)}T15:00:00Z`}::timestamptz
    where id = ${appDone.id}`;

  const entries: [string, string, string, number][] = [
    [paid.id, d.people.member, day(2), 150],
    [paid.id, d.people.admin, day(3), 60],
    [alsoPaid.id, d.people.member, day(8), 240],
    [free.id, d.people.member, day(9), 45],
    [banked.id, d.people.admin, day(14), 90],
    [banked.id, d.people.member, day(15), 120],
    [appDone.id, d.people.member, day(6), 180],
    [appDone.id, d.people.admin, day(19), 75],
    [appOpen.id, d.people.member, day(21), 120],
  ];
  for (const [ticketId, userId, spentOn, minutes] of entries) {
    await sql`
      insert into time_entries (workspace_id, ticket_id, user_id, project_id, billing_client_id, category_id, period_id, spent_on, timezone, minutes, created_by)
      select t.workspace_id, t.id, ${userId}, t.project_id, t.billing_client_id,
             coalesce((select pm.category_id from project_memberships pm where pm.project_id = t.project_id and pm.identity_id = ${userId}),
                      (select m.category_id from memberships m where m.workspace_id = t.workspace_id and m.identity_id = ${userId})),
             ${last!.id}, ${spentOn}::date, 'UTC', ${minutes}, ${userId}
      from tickets t where t.id = ${ticketId}`;
  }
}

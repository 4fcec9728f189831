import type { Db } from '../src/db/connect.ts';
import { issueToken } from '../src/core/auth/tokens.ts';
import { addPerson } from '../src/core/people/users.ts';
import { addProjectMember, createClient, createProject, createWorkspace } from '../src/core/workspaces/create.ts';

export interface BigWorkspace {
  slug: string;
  workspaceId: string;
  tickets: number;
  /** A member of 7 projects whose token is restricted to 6 of them (60% of the tickets). */
  restrictedToken: string;
  restrictedProjectIds: string[];
  /** A member with 2,000 open tickets assigned. */
  busyToken: string;
  busyId: string;
  /** A ticket with 200 events and 100 comments. */
  heavyRef: string;
  ownerToken: string;
  ownerId: string;
  projectIds: string[];
}

const WORDS = [
  'login',
  'invoice',
  'checkout',
  'search',
  'export',
  'dashboard',
  'upload',
  'billing',
  'report',
  'onboarding',
  'mobile',
  'email',
  'cache',
  'timeout',
  'layout',
  'translation',
  'payment',
  'profile',
  'sync',
  'import',
];
const VERBS = [
  'fails',
  'is slow',
  'breaks',
  'needs polish',
  'shows wrong totals',
  'crashes',
  'times out',
  'looks off',
  'rejects input',
  'loses data',
  'flickers',
  'hangs',
];

/**
 * A large agency workspace for the benchmarks: `n` tickets over 8 workflow states and 10
 * projects, with labels, comments and links, written with set-based SQL (a few seconds).
 */
export async function seedBigWorkspace(sql: Db, n = 100_000): Promise<BigWorkspace> {
  const slug = 'bench';
  const ws = await createWorkspace(sql, { slug, name: 'Bench Agency' });
  await sql`insert into workflow_states (workspace_id, key, name, category, position) values (${ws}, 'blocked', 'Blocked', 'open', 6), (${ws}, 'qa', 'QA', 'open', 7)`;
  const clients = [
    await createClient(sql, { workspaceId: ws, name: 'Umbrella Corp', code: 'UMB' }),
    await createClient(sql, { workspaceId: ws, name: 'Stark Industries', code: 'STK' }),
  ];
  const projectIds: string[] = [];
  for (let i = 0; i < 10; i++) {
    projectIds.push(
      await createProject(sql, {
        workspaceId: ws,
        key: `P${String.fromCharCode(65 + i)}`,
        name: `Project ${i}`,
        billingClientId: i < 8 ? clients[i % 2]! : null,
      }),
    );
  }
  const owner = await addPerson(sql, { workspaceId: ws, email: 'owner@bench.test', name: 'Bench Owner', role: 'owner', password: 'bench-pass' });
  const restricted = await addPerson(sql, { workspaceId: ws, email: 'restricted@bench.test', name: 'Rita Restricted', role: 'member', password: 'bench-pass' });
  const busy = await addPerson(sql, { workspaceId: ws, email: 'busy@bench.test', name: 'Bo Busy', role: 'member', password: 'bench-pass' });
  const staff = [owner, restricted, busy];
  for (let i = 0; i < 12; i++) staff.push(await addPerson(sql, { workspaceId: ws, email: `staff${i}@bench.test`, name: `Staff ${i}`, role: 'member' }));
  for (const [i, pid] of projectIds.entries()) {
    if (i < 7) await addProjectMember(sql, { workspaceId: ws, projectId: pid, identityId: restricted, access: 'full' });
    await addProjectMember(sql, { workspaceId: ws, projectId: pid, identityId: busy, access: 'full' });
    for (const s of staff.slice(3)) await addProjectMember(sql, { workspaceId: ws, projectId: pid, identityId: s, access: i % 2 ? 'full' : 'limited' });
  }

  const states = (await sql<{ id: string }[]>`select id from workflow_states where workspace_id = ${ws} order by position`).map((r) => r.id);
  const kinds = (await sql<{ id: string }[]>`select id from ticket_kinds where workspace_id = ${ws} order by position`).map((r) => r.id);
  const prios = (await sql<{ id: string }[]>`select id from priorities where workspace_id = ${ws} order by position`).map((r) => r.id);
  const labels = (await sql<{ id: string }[]>`select id from labels where workspace_id = ${ws} order by name`).map((r) => r.id);
  const closed = new Set((await sql<{ id: string }[]>`select id from workflow_states where workspace_id = ${ws} and category = 'closed'`).map((r) => r.id));

  // Tickets go in with their triggers (derived columns); comments, labels and links with triggers
  // off (session_replication_role = replica, trusted seed data), and the search vectors the comment
  // triggers would keep are then computed in one set-based update.
  await sql.begin(async (t) => {
    const tx = t as unknown as Db;
    // Tickets: project g % 10, number g / 10 + 1 (unique per project); activity spread over a year.
    // Every 50th ticket is assigned to the busy member (2,000 of 100,000), others round-robin.
    await tx`
      insert into tickets (workspace_id, project_id, number, title, description, kind_id, state_id, priority_id, assignee_id, reporter_id,
                           billing_client_id, due_date, estimate_minutes, closed_at, created_at, updated_at)
      select ${ws}, (${projectIds}::uuid[])[1 + g % 10], g / 10 + 1,
             (${WORDS}::text[])[1 + g % 20] || ' ' || (${VERBS}::text[])[1 + (g / 20) % 12] || ' #' || g,
             'Steps: open the ' || (${WORDS}::text[])[1 + (g / 7) % 20] || ' page and ' || (${VERBS}::text[])[1 + g % 12] || '.',
             (${kinds}::uuid[])[1 + g % 4], st.id, (${prios}::uuid[])[1 + (g / 3) % 4],
             case when g % 50 = 0 then ${busy}::uuid else (${staff}::uuid[])[1 + g % 15] end,
             (${staff}::uuid[])[1 + (g / 15) % 15],
             (select p.billing_client_id from projects p where p.id = (${projectIds}::uuid[])[1 + g % 10]),
             case when g % 9 = 0 then current_date + (g % 40 - 10) end,
             case when g % 4 = 0 then 30 + g % 240 end,
             case when st.id = any(${[...closed]}::uuid[]) then now() - make_interval(secs => g * 300) end,
             now() - make_interval(secs => g * 300 + 600), now() - make_interval(secs => g * 300)
      from generate_series(1, ${n}) g
      cross join lateral (select (${states}::uuid[])[1 + (case when g % 50 = 0 then g % 5 else g % 8 end)] as id) st`;
    await tx`insert into ticket_refs (workspace_id, project_id, number, ticket_id) select workspace_id, project_id, number, id from tickets where workspace_id = ${ws}`;
    await tx`update projects p set next_number = (select coalesce(max(number), 0) from tickets t where t.project_id = p.id) where workspace_id = ${ws}`;
    await tx`set local session_replication_role = replica`;
    await tx`
      insert into ticket_labels (ticket_id, label_id)
      select t.id, (${labels}::uuid[])[1 + (t.number % 6)] from tickets t where t.workspace_id = ${ws} and t.number % 3 <> 0
      union
      select t.id, (${labels}::uuid[])[1 + ((t.number / 6) % 6)] from tickets t where t.workspace_id = ${ws} and t.number % 5 = 0`;
    await tx`
      insert into comments (workspace_id, ticket_id, author_id, audience, body, created_at, updated_at)
      select ${ws}, t.id, t.assignee_id, case when c % 2 = 0 then 'internal' else 'client' end,
             'Looked into the ' || (${WORDS}::text[])[1 + (t.number + c) % 20] || ' issue; ' || (${VERBS}::text[])[1 + c % 12] || ' again.',
             t.updated_at, t.updated_at
      from tickets t cross join generate_series(1, 2) c where t.workspace_id = ${ws} and t.number % 5 = 1`;
    await tx`update tickets t set comment_count = c.n from (select ticket_id, count(*)::int n from comments where workspace_id = ${ws} group by 1) c where c.ticket_id = t.id`;
    await tx`
      insert into ticket_links (workspace_id, source_id, target_id, kind)
      select ${ws}, a.id, b.id, case when a.number % 2 = 0 then 'blocks' else 'relates' end
      from tickets a join tickets b on b.project_id = a.project_id and b.number = a.number + 5000
      where a.workspace_id = ${ws} and a.number % 10 = 3`;
  });
  await sql`
    update tickets set search_public = ticket_search_public(title, description, ticket_comment_text(id, 'client')),
                       search_internal = to_tsvector('simple', ticket_comment_text(id, 'internal'))
    where workspace_id = ${ws}`;

  // The heavy ticket: 200 events and 100 comments.
  const [heavy] = await sql<{ id: string; key: string; number: number }[]>`
    select t.id, p.key, t.number from tickets t join projects p on p.id = t.project_id where t.project_id = ${projectIds[0]!} order by t.number limit 1`;
  await sql`
    insert into comments (workspace_id, ticket_id, author_id, audience, body)
    select ${ws}, ${heavy!.id}, ${busy}, case when i % 3 = 0 then 'internal' else 'client' end, 'Comment **' || i || '** with some _markdown_ and a [link](https://example.com/' || i || ').'
    from generate_series(1, 100) i`;
  await sql`
    insert into ticket_events (workspace_id, ticket_id, kind, actor_id, payload)
    select ${ws}, ${heavy!.id}, 'field_changed', ${busy}, jsonb_build_object('field', 'title', 'old', 'v' || i, 'new', 'v' || (i + 1)) from generate_series(1, 200) i`;

  const mint = async (who: string, projectIds: string[] | null) =>
    (await issueToken(sql, { workspaceId: ws, createdBy: who, actsAs: who, kind: 'delegated', name: 'bench', scopes: ['read', 'write', 'triage'], projectIds }))
      .token;
  return {
    slug,
    workspaceId: ws,
    tickets: n,
    restrictedToken: await mint(restricted, projectIds.slice(0, 6)),
    restrictedProjectIds: projectIds.slice(0, 6),
    busyToken: await mint(busy, null),
    busyId: busy,
    heavyRef: `${heavy!.key}-${heavy!.number}`,
    ownerToken: await mint(owner, null),
    ownerId: owner,
    projectIds,
  };
}

/**
 * Time for the benchmarks: monthly periods over the last 13 months and the next one, and 5,000
 * entries over the last year for the busy member, on tickets assigned to them.
 */
export async function seedTime(sql: Db, big: BigWorkspace): Promise<{ ticketIds: string[] }> {
  await sql`
    insert into periods (workspace_id, period_start, period_end)
    select ${big.workspaceId}, m::date, (m + interval '1 month' - interval '1 day')::date
    from generate_series(date_trunc('month', current_date) - interval '13 months', date_trunc('month', current_date) + interval '1 month', interval '1 month') m`;
  const tickets = await sql<{ id: string }[]>`
    select id from tickets where workspace_id = ${big.workspaceId} and assignee_id = ${big.busyId} order by id limit 200`;
  const ids = tickets.map((t) => t.id);
  await sql`
    insert into time_entries (workspace_id, ticket_id, user_id, project_id, billing_client_id, period_id, spent_on, started_at, timezone, minutes, note, billable, created_by)
    select ${big.workspaceId}, t.id, ${big.busyId}, t.project_id, t.billing_client_id, p.id, d.day, time '09:00' + make_interval(mins => (i % 16) * 30), 'UTC',
           15 + (i % 8) * 15, case when i % 3 = 0 then 'Worked on ' || t.title end, i % 7 <> 0, ${big.busyId}
    from generate_series(1, 5000) i
    cross join lateral (select (current_date - (i % 365))::date as day) d
    join tickets t on t.id = (${ids}::uuid[])[1 + i % ${ids.length}]
    join periods p on p.workspace_id = ${big.workspaceId} and d.day between p.period_start and p.period_end`;
  return { ticketIds: ids };
}

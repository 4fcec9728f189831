import os from 'node:os';
import type { Db } from '../src/db/connect.ts';
import { issueToken } from '../src/core/auth/tokens.ts';
import { addPerson } from '../src/core/people/users.ts';
import { addProjectMember, createClient, createProject, createWorkspace } from '../src/core/workspaces/create.ts';
import { refreshStoredHtml } from '../src/core/tickets/markdown-refresh.ts';

export interface BigWorkspace {
  slug: string;
  workspaceId: string;
  tickets: number;
  /** A member of 7 projects whose token is restricted to 6 of them (60% of the tickets). */
  restrictedToken: string;
  restrictedProjectIds: string[];
  /** A member with every 50th ticket assigned (2,000 of 100,000). */
  busyToken: string;
  busyId: string;
  /** A ticket with 200 events and 100 comments. */
  heavyRef: string;
  ownerToken: string;
  ownerId: string;
  projectIds: string[];
  /** What `growBigWorkspace` needs to add more tickets of the same shape. */
  shape: TicketShape;
}

/** The ids the ticket generator draws from, and the clock it counts back from. */
export interface TicketShape {
  workspaceId: string;
  projectIds: string[];
  /** owner, restricted, busy, then 12 staff members: assignees and reporters round-robin. */
  staffIds: string[];
  busyId: string;
  states: string[];
  kinds: string[];
  prios: string[];
  labels: string[];
  closed: string[];
  /**
   * Ticket g was created g x 5 minutes + 10 minutes before this instant and updated 10 minutes
   * later: tickets added by a later `growBigWorkspace` are older than every earlier one (the first
   * list pages and a cursor taken before the growth stay the same), and a range of g is a range of
   * created_at.
   */
  seededAt: string;
}

/** The size of the large workspace: BENCH_TICKETS, 100,000 by default. */
export function benchTickets(): number {
  const n = Number(process.env.BENCH_TICKETS ?? 100_000);
  if (!Number.isInteger(n) || n < 1000) throw new Error(`BENCH_TICKETS must be an integer of at least 1000, not ${process.env.BENCH_TICKETS}`);
  return n;
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
 * A large agency workspace for the benchmarks: `n` tickets (BENCH_TICKETS, 100,000 by default)
 * over 8 workflow states and 10 projects, with labels, comments and links, written with
 * set-based SQL (see `addTickets`).
 */
export async function seedBigWorkspace(sql: Db, n = benchTickets(), opts: AddOptions = {}): Promise<BigWorkspace> {
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
  const closed = (await sql<{ id: string }[]>`select id from workflow_states where workspace_id = ${ws} and category = 'closed'`).map((r) => r.id);
  const [clock] = await sql<{ at: Date }[]>`select now() as at`;
  const shape: TicketShape = {
    workspaceId: ws,
    projectIds,
    staffIds: staff,
    busyId: busy,
    states,
    kinds,
    prios,
    labels,
    closed,
    seededAt: clock!.at.toISOString(),
  };
  await addTickets(sql, shape, 1, n, opts);
  // The heavy ticket: 200 events and 100 comments.
  const [heavy] = await sql<{ id: string; key: string; number: number }[]>`
    select t.id, p.key, t.number from tickets t join projects p on p.id = t.project_id where t.project_id = ${projectIds[0]!} order by t.number limit 1`;
  await sql`
    insert into comments (workspace_id, ticket_id, author_id, audience, body)
    select ${ws}, ${heavy!.id}, ${busy}, case when i % 3 = 0 then 'internal' else 'client' end, 'Comment **' || i || '** with some _markdown_ and a [link](https://example.com/' || i || ').'
    from generate_series(1, 100) i`;
  // their HTML as the API's writers store it (src/core/tickets/markdown.ts, sql/110)
  await refreshStoredHtml(sql, { ticketIds: [heavy!.id] });
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
    shape,
  };
}

/**
 * The same workspace with `n` tickets: tickets `big.tickets + 1` to `n` are added as a seed of `n`
 * would have written them (same projects, numbers, states, people, labels, comments, links);
 * they are older than every ticket already there.
 */
export async function growBigWorkspace(sql: Db, big: BigWorkspace, n: number, opts: AddOptions = {}): Promise<BigWorkspace> {
  if (n <= big.tickets) return big;
  await addTickets(sql, big.shape, big.tickets + 1, n, opts);
  return { ...big, tickets: n };
}

/**
 * Tickets `from`..`to` of the generator, with their refs, labels, comments, links, comment
 * counts and search vectors, and the projects' next numbers.
 *
 * - Tickets go in with their triggers (derived columns, foreign keys, board counters), in chunks
 *   of consecutive g over `lanes` connections at once (the row triggers and to_tsvector are
 *   CPU-bound: one backend per core). Comments, labels and links go in with triggers off
 *   (session_replication_role = replica, trusted seed data); the labels arrays the label triggers
 *   would keep are then made by the function they call, and the summaries that show them (the
 *   tickets' insert trigger wrote them without labels) by theirs, and the search vectors and comment
 *   counts the comment triggers would keep are set in one update of the tickets that have
 *   comments (a ticket without any already holds them: the insert trigger computed its public
 *   vector from title and description, the internal one is empty).
 * - When the new tickets outnumber those already in the table, the tickets' secondary indexes
 *   (neither unique nor a constraint's) are dropped first and built again at the end, from their
 *   own definitions (storage options included), two at a time: building an index over a million
 *   rows is much cheaper than a million inserts into it, above all the two GIN search indexes,
 *   whose small pending list (sql/013) would otherwise be merged every few hundred rows.
 * - What is seeded is the same as one statement over 1..n wrote before: the same rows and values,
 *   logged tables, every index in the end; only the physical order of rows may differ.
 */
async function addTickets(sql: Db, shape: TicketShape, from: number, to: number, opts: AddOptions): Promise<void> {
  const { workspaceId: ws, projectIds, staffIds: staff, busyId: busy, states, kinds, prios, labels, closed, seededAt: at } = shape;
  const chunk = opts.chunk ?? 50_000;
  const lanes = opts.lanes ?? Math.max(2, os.cpus().length);
  // the new tickets of table alias `t`, as a range of created_at (see TicketShape.seededAt)
  const isNew = (t: string) =>
    sql`${sql(t)}.created_at between ${at}::timestamptz - make_interval(secs => ${to}::float8 * 300 + 600) and ${at}::timestamptz - make_interval(secs => ${from}::float8 * 300 + 600)`;
  const replica = (fn: (tx: Db) => Promise<unknown>) =>
    sql.begin(async (t) => {
      const tx = t as unknown as Db;
      await tx`set local session_replication_role = replica`;
      await fn(tx);
    });

  const [{ existing }] = await sql<[{ existing: number }]>`select count(*)::int as existing from tickets`;
  const dropped = to - from + 1 > existing ? await dropSecondaryIndexes(sql, 'tickets') : [];
  try {
    const ranges: [number, number][] = [];
    for (let a = from; a <= to; a += chunk) ranges.push([a, Math.min(to, a + chunk - 1)]);
    // Tickets: project g % 10, number g / 10 + 1 (unique per project); activity spread over the years.
    // Every 50th ticket is assigned to the busy member (2,000 of 100,000), others round-robin.
    await inLanes(
      lanes,
      ranges.map(([a, b]) => async () => {
        await sql`
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
                 case when st.id = any(${closed}::uuid[]) then ${at}::timestamptz - make_interval(secs => g::float8 * 300) end,
                 ${at}::timestamptz - make_interval(secs => g::float8 * 300 + 600), ${at}::timestamptz - make_interval(secs => g::float8 * 300)
          from generate_series(${a}::int, ${b}::int) g
          cross join lateral (select (${states}::uuid[])[1 + (case when g % 50 = 0 then g % 5 else g % 8 end)] as id) st`;
      }),
    );
    // fresh statistics, or the planner takes the grown table for the small one it knew (a nested loop over it per ticket)
    await sql`analyze tickets`;
    // What hangs off the new tickets: independent of each other, so side by side.
    await inLanes(lanes, [
      () =>
        sql`insert into ticket_refs (workspace_id, project_id, number, ticket_id) select t.workspace_id, t.project_id, t.number, t.id from tickets t where t.workspace_id = ${ws} and ${isNew('t')}`,
      () =>
        replica(
          (tx) => tx`
            insert into ticket_labels (ticket_id, label_id)
            select t.id, (${labels}::uuid[])[1 + (t.number % 6)] from tickets t where t.workspace_id = ${ws} and ${isNew('t')} and t.number % 3 <> 0
            union
            select t.id, (${labels}::uuid[])[1 + ((t.number / 6) % 6)] from tickets t where t.workspace_id = ${ws} and ${isNew('t')} and t.number % 5 = 0`,
        ),
      () =>
        replica(
          (tx) => tx`
            insert into comments (workspace_id, ticket_id, author_id, audience, body, created_at, updated_at)
            select ${ws}, t.id, t.assignee_id, case when c % 2 = 0 then 'internal' else 'client' end,
                   'Looked into the ' || (${WORDS}::text[])[1 + (t.number + c) % 20] || ' issue; ' || (${VERBS}::text[])[1 + c % 12] || ' again.',
                   t.updated_at, t.updated_at
            from tickets t cross join generate_series(1, 2) c where t.workspace_id = ${ws} and ${isNew('t')} and t.number % 5 = 1`,
        ),
      // a link from ticket number k to number k + 5000 of the same project, added with its target
      () =>
        replica(
          (tx) => tx`
            insert into ticket_links (workspace_id, source_id, target_id, kind)
            select ${ws}, a.id, b.id, case when a.number % 2 = 0 then 'blocks' else 'relates' end
            from tickets a join tickets b on b.project_id = a.project_id and b.number = a.number + 5000
            where a.workspace_id = ${ws} and a.number % 10 = 3 and b.workspace_id = ${ws} and ${isNew('b')}`,
        ),
    ]);
    // the labels arrays the ticket_labels triggers keep (sql/106), for the new tickets that have labels, and
    // then their stored summaries (sql/108), which show them: computed without the triggers' row locks
    // (nothing else writes meanwhile), the arrays with their own triggers off so that each summary is
    // written once, by the second statement, which moves the read mark as the triggers would
    await replica(
      (tx) => tx`
        select compute_ticket_label_sets(array(
          select distinct tl.ticket_id from ticket_labels tl join tickets t on t.id = tl.ticket_id where t.workspace_id = ${ws} and ${isNew('t')}))`,
    );
    await sql`
      select compute_ticket_summaries(array(
        select distinct tl.ticket_id from ticket_labels tl join tickets t on t.id = tl.ticket_id where t.workspace_id = ${ws} and ${isNew('t')}))`;
    await replica(
      (tx) => tx`
        update tickets t set comment_count = c.n,
                             search_public = ticket_search_public(t.title, t.description, ticket_comment_text(t.id, 'client')),
                             search_internal = to_tsvector('simple', ticket_comment_text(t.id, 'internal'))
        from (select ticket_id, count(*)::int n from comments where workspace_id = ${ws} group by 1) c
        where c.ticket_id = t.id and t.workspace_id = ${ws} and ${isNew('t')}`,
    );
  } finally {
    await inLanes(
      lanes,
      dropped.map(
        (definition) => () =>
          sql.begin(async (t) => {
            await t`set local maintenance_work_mem = '256MB'`;
            await t.unsafe(definition);
          }),
      ),
    );
  }
  await sql`update projects p set next_number = (select coalesce(max(number), 0) from tickets t where t.project_id = p.id) where workspace_id = ${ws}`;
}

/** Tickets per insert statement (50,000) and connections writing at once (the cores, at least 2). */
export interface AddOptions {
  chunk?: number;
  lanes?: number;
}

/** Drops `table`'s indexes that are neither unique nor a constraint's, and returns their definitions. */
async function dropSecondaryIndexes(sql: Db, table: string): Promise<string[]> {
  const indexes = await sql<{ name: string; definition: string }[]>`
    select i.indexrelid::regclass::text as name, pg_get_indexdef(i.indexrelid) as definition
    from pg_index i
    where i.indrelid = ${table}::regclass and not i.indisunique and not i.indisprimary
      and not exists (select 1 from pg_constraint c where c.conindid = i.indexrelid)`;
  for (const i of indexes) await sql.unsafe(`drop index ${i.name}`);
  return indexes.map((i) => i.definition);
}

/** Runs `tasks` on at most `lanes` connections at once, in order of the list. */
async function inLanes(lanes: number, tasks: (() => Promise<unknown>)[]): Promise<void> {
  let next = 0;
  const lane = async () => {
    while (next < tasks.length) await tasks[next++]!();
  };
  await Promise.all(Array.from({ length: Math.min(lanes, tasks.length) }, lane));
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

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { secondWaitsForFirst } from './helpers/lock-race.ts';
import { startTestApp, type TestApp } from './helpers/app.ts';
import { addLabels, makeClient, makeProject, makeTicket, makeToken, makeUser, makeWorkspace, type Person, type Workspace } from './helpers/factories.ts';

/**
 * Each ticket's summary is kept as JSON text in ticket_summaries by triggers (sql/108) and read by
 * every list, board and "my work": after any change to a ticket or to a row its summary names
 * (project, kind, state, priority, a person's name or client, the billing client, the labels), the
 * kept text must be exactly what computing it again gives, in the same transaction.
 */
let app: TestApp;
let ws: Workspace;
let client: { id: string };
let project: { id: string; key: string };
let staff: Person;
let guest: Person;
let ownerToken: string;

beforeAll(async () => {
  app = await startTestApp();
  ws = await makeWorkspace(app.db.sql);
  client = await makeClient(app.db.sql, ws, { name: 'Acme Ltd' });
  project = await makeProject(app.db.sql, ws, { billingClientId: client.id });
  staff = await makeUser(app.db.sql, ws, { name: 'Stella Staff' });
  guest = await makeUser(app.db.sql, ws, { role: 'client', clientId: client.id, name: 'Gus Guest' });
  ownerToken = (await makeToken(app.db.sql, ws, await makeUser(app.db.sql, ws, { role: 'owner' }))).token;
});
afterAll(() => app.close());

/** The workspace's tickets whose kept summary differs from the one computed again now (none when all agree). */
async function drift(): Promise<string[]> {
  return app.db.sql.begin(async (tx) => {
    await tx`create temp table kept on commit drop as select s.* from ticket_summaries s join tickets t on t.id = s.ticket_id where t.workspace_id = ${ws.id}`;
    await tx`select compute_ticket_summaries(array(select id from tickets where workspace_id = ${ws.id}))`;
    const rows = await tx<{ id: string }[]>`
      select t.id from tickets t left join kept k on k.ticket_id = t.id left join ticket_summaries s on s.ticket_id = t.id
      where t.workspace_id = ${ws.id} and (k.ticket_id is null or (k.head, k.tail) is distinct from (s.head, s.tail))`;
    return rows.map((r) => r.id);
  });
}

/** The summary as the REST list shows it, found by title. */
async function listed(title: string): Promise<Record<string, unknown>> {
  const res = await app.call('GET', `/api/w/${ws.slug}/tickets?limit=50`, { token: ownerToken });
  expect(res.status).toBe(200);
  return (res.body as { items: Record<string, unknown>[] }).items.find((t) => t.title === title)!;
}

describe('ticket_summaries', () => {
  it('follows every change of a ticket and of the rows its summary names, in the same transaction', async () => {
    const sql = app.db.sql;
    const a = await makeTicket(sql, ws, { projectId: project.id, title: 'Alpha', assigneeId: staff.id, reporterId: guest.id, billingClientId: client.id });
    const b = await makeTicket(sql, ws, { projectId: null, title: 'Inbox one', reporterId: guest.id });
    await addLabels(sql, ws, a.id, ['frontend']);
    expect(await drift()).toEqual([]);

    // the ticket's own columns, several tickets in one statement, the project (humanId), the inbox
    await sql`update tickets set title = 'Alpha two', due_date = '2026-12-01', start_date = '2026-11-20', estimate_minutes = 90 where id = ${a.id}`;
    await sql`update tickets set priority_id = (select id from priorities where workspace_id = ${ws.id} order by position desc limit 1),
                                 kind_id = (select id from ticket_kinds where workspace_id = ${ws.id} order by key desc limit 1)
              where workspace_id = ${ws.id}`;
    await sql`update tickets set project_id = ${project.id}, number = 99 where id = ${b.id}`;
    expect(await drift()).toEqual([]);

    // the named rows: project key and name, state, kind, priority, client, a person's name
    await sql`update projects set key = 'RENAMED', name = 'Renamed project' where id = ${project.id}`;
    await sql`update workflow_states set name = 'Started', position = position + 100 where workspace_id = ${ws.id}`;
    await sql`update ticket_kinds set name = name || ' kind' where workspace_id = ${ws.id}`;
    await sql`update priorities set key = key || '_x', position = position + 10 where workspace_id = ${ws.id}`;
    await sql`update clients set name = 'Acme Holdings' where id = ${client.id}`;
    await sql`update identities set name = 'Stella Renamed' where id = ${staff.id}`;
    expect(await drift()).toEqual([]);
    const shown = await listed('Alpha two');
    expect(shown).toMatchObject({
      humanId: `RENAMED-${a.number}`,
      project: { key: 'RENAMED', name: 'Renamed project' },
      assignee: { id: staff.id, name: 'Stella Renamed', clientName: null },
      reporter: { id: guest.id, name: 'Gus Guest', clientName: 'Acme Holdings' },
      billingClient: { id: client.id, name: 'Acme Holdings' },
      state: { name: 'Started' },
      dueDate: '2026-12-01',
      startDate: '2026-11-20',
      estimateMinutes: 90,
      labels: [{ name: 'frontend' }],
    });

    // the name a workspace learned from mail (contact_names), added, changed and taken away; a person's client
    await sql`insert into contact_names (workspace_id, identity_id, name) values (${ws.id}, ${guest.id}, 'Gus from the mail')`;
    expect(await drift()).toEqual([]);
    expect(await listed('Alpha two')).toMatchObject({ reporter: { name: 'Gus from the mail' } });
    await sql`update contact_names set name = 'Gus again' where workspace_id = ${ws.id} and identity_id = ${guest.id}`;
    expect(await drift()).toEqual([]);
    await sql`delete from contact_names where workspace_id = ${ws.id} and identity_id = ${guest.id}`;
    const other = await makeClient(sql, ws, { name: 'Other Co' });
    await sql`update memberships set client_id = ${other.id} where workspace_id = ${ws.id} and identity_id = ${guest.id}`;
    expect(await drift()).toEqual([]);
    expect(await listed('Alpha two')).toMatchObject({ reporter: { name: 'Gus Guest', clientName: 'Other Co' } });

    // labels (through ticket_label_sets, sql/106), a rolled-back change, a deleted ticket
    await addLabels(sql, ws, a.id, ['backend']);
    await sql`update labels set name = 'Aardvark' where workspace_id = ${ws.id} and name = 'frontend'`;
    await sql
      .begin(async (tx) => {
        await tx`update tickets set title = 'Never seen' where id = ${a.id}`;
        throw new Error('roll back');
      })
      .catch(() => {});
    await sql`delete from tickets where id = ${b.id}`;
    expect(await drift()).toEqual([]);
    expect(await listed('Alpha two')).toMatchObject({ labels: [{ name: 'Aardvark' }, { name: 'backend' }] });
    expect(await sql`select 1 from ticket_summaries where ticket_id = ${b.id}`).toHaveLength(0);
  });

  it('notices a change made behind the triggers (the test of the test)', async () => {
    const t = await makeTicket(app.db.sql, ws, { projectId: project.id, title: 'Behind' });
    await app.db.sql.begin(async (tx) => {
      await tx`set local session_replication_role = replica`;
      await tx`update tickets set title = 'Behind the triggers' where id = ${t.id}`;
    });
    expect(await drift()).toEqual([t.id]);
    await app.db.sql`select compute_ticket_summaries(array[${t.id}]::uuid[])`;
    expect(await drift()).toEqual([]);
  });

  it('keeps both changes when a ticket and the project it names change at once', async () => {
    const t = await makeTicket(app.db.sql, ws, { projectId: project.id, title: 'Concurrent' });
    // the rename's trigger waits for the first's lock on the ticket, then reads its new title
    await secondWaitsForFirst(
      app.db.url,
      (tx) => tx`update tickets set title = 'Concurrent, retitled' where id = ${t.id}`,
      (tx) => tx`update projects set name = 'Project renamed meanwhile' where id = ${project.id}`,
    );
    expect(await drift()).toEqual([]);
    expect(await listed('Concurrent, retitled')).toMatchObject({ project: { name: 'Project renamed meanwhile' } });
  });
});

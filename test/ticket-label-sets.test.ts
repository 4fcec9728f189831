import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { secondWaitsForFirst } from './helpers/lock-race.ts';
import { startTestApp, type TestApp } from './helpers/app.ts';
import { addLabels, makeProject, makeTicket, makeWorkspace, type Workspace } from './helpers/factories.ts';

/**
 * Each ticket's labels array is kept in ticket_label_sets by triggers (sql/106) and read by every
 * summary: after any change to ticket_labels or to a label's name, the kept arrays must be
 * exactly what the rows give, and a ticket without labels must have none.
 */
let app: TestApp;
let ws: Workspace;
let project: { id: string; key: string };

beforeAll(async () => {
  app = await startTestApp();
  ws = await makeWorkspace(app.db.sql);
  project = await makeProject(app.db.sql, ws, {});
});
afterAll(() => app.close());

/** Every ticket of the workspace whose kept array differs from the one its rows give (none when all agree). */
async function drift(): Promise<{ id: string; want: string | null; got: string | null }[]> {
  return app.db.sql<{ id: string; want: string | null; got: string | null }[]>`
    select t.id,
           (select json_agg(json_build_object('id', l.id, 'name', l.name) order by lower(l.name), l.id)
            from ticket_labels tl join labels l on l.id = tl.label_id where tl.ticket_id = t.id)::text as want,
           s.labels::text as got
    from tickets t left join ticket_label_sets s on s.ticket_id = t.id
    where t.workspace_id = ${ws.id}
      and (select json_agg(json_build_object('id', l.id, 'name', l.name) order by lower(l.name), l.id)
           from ticket_labels tl join labels l on l.id = tl.label_id where tl.ticket_id = t.id)::text is distinct from s.labels::text`;
}

async function labelId(name: string): Promise<string> {
  const [l] = await app.db.sql<{ id: string }[]>`select id from labels where workspace_id = ${ws.id} and name = ${name}`;
  return l!.id;
}

describe('ticket_label_sets', () => {
  it('follows every change of ticket labels and label names, in the same transaction', async () => {
    const sql = app.db.sql;
    const a = await makeTicket(sql, ws, { projectId: project.id });
    const b = await makeTicket(sql, ws, { projectId: project.id });
    const c = await makeTicket(sql, ws, { projectId: project.id });
    await addLabels(sql, ws, a.id, ['frontend', 'backend']);
    await addLabels(sql, ws, b.id, ['design']);
    expect(await drift()).toEqual([]);
    const [kept] = await sql<{ labels: { name: string }[] }[]>`select labels from ticket_label_sets where ticket_id = ${a.id}`;
    expect(kept!.labels.map((l) => l.name)).toEqual(['backend', 'frontend']);
    expect(await sql`select 1 from ticket_label_sets where ticket_id = ${c.id}`).toHaveLength(0);

    // several tickets in one statement, one label taken off, all of a ticket's taken off
    await sql`insert into ticket_labels (ticket_id, label_id) select id, ${await labelId('design')} from tickets where id in (${a.id}, ${c.id})`;
    await sql`delete from ticket_labels where ticket_id = ${a.id} and label_id = ${await labelId('frontend')}`;
    await sql`delete from ticket_labels where ticket_id = ${b.id}`;
    expect(await drift()).toEqual([]);
    expect(await sql`select 1 from ticket_label_sets where ticket_id = ${b.id}`).toHaveLength(0);

    // a rename reorders (by name, case-insensitive); a name set to itself changes nothing
    await sql`update labels set name = 'Aardvark' where id = ${await labelId('design')}`;
    await sql`update labels set name = name where workspace_id = ${ws.id}`;
    expect(await drift()).toEqual([]);
    const [renamed] = await sql<{ labels: { name: string }[] }[]>`select labels from ticket_label_sets where ticket_id = ${a.id}`;
    expect(renamed!.labels.map((l) => l.name)).toEqual(['Aardvark', 'backend']);

    // a label deleted (its ticket_labels go with it), a ticket deleted, a change rolled back
    await sql`delete from labels where id = ${await labelId('backend')}`;
    await sql`delete from tickets where id = ${c.id}`;
    await sql
      .begin(async (tx) => {
        await tx`delete from ticket_labels where ticket_id = ${a.id}`;
        throw new Error('roll back');
      })
      .catch(() => {});
    expect(await drift()).toEqual([]);
    expect(await sql`select 1 from ticket_label_sets where ticket_id = ${c.id}`).toHaveLength(0);
    expect(await sql`select 1 from ticket_label_sets where ticket_id = ${a.id}`).toHaveLength(1);
  });

  it('keeps both labels when two transactions label one ticket at once', async () => {
    const t = await makeTicket(app.db.sql, ws, { projectId: project.id });
    const [one, other] = (
      await app.db.sql<{ id: string }[]>`
      insert into labels (workspace_id, name) values (${ws.id}, 'First writer'), (${ws.id}, 'second writer') returning id`
    ).map((l) => l.id);
    // the second writer's trigger waits for the first's lock on the ticket, then sees its row
    await secondWaitsForFirst(
      app.db.url,
      (tx) => tx`insert into ticket_labels (ticket_id, label_id) values (${t.id}, ${one!})`,
      (tx) => tx`insert into ticket_labels (ticket_id, label_id) values (${t.id}, ${other!})`,
    );
    expect(await drift()).toEqual([]);
    const [kept] = await app.db.sql<{ labels: { name: string }[] }[]>`select labels from ticket_label_sets where ticket_id = ${t.id}`;
    expect(kept!.labels.map((l) => l.name)).toEqual(['First writer', 'second writer']);
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventPayload, visibleEvent } from '../src/core/access/events.ts';
import type { Principal } from '../src/core/auth/principal.ts';
import { runOp } from '../src/core/operation.ts';
import { recordEvents } from '../src/core/tickets/events.ts';
import { getTicketPage } from '../src/core/tickets/get.ts';
import { readTicketPageJson } from '../src/core/tickets/read.ts';
import { isoSql, personNameSql } from '../src/core/tickets/summary.ts';
import { startTestApp, type TestApp } from './helpers/app.ts';
import { makeClient, makeProject, makeTicket, makeToken, makeUser, makeWorkspace, type Person, type Workspace } from './helpers/factories.ts';

/**
 * The timeline of a ticket page is put together from the text each event keeps (sql/105): it must
 * be the same timeline the page built from the rows before, for every reader, and follow what
 * changes after an event was written (a person's name, a redaction).
 */
let app: TestApp;
let ws: Workspace;
let owner: Person;
let member: Person;
let clientUser: Person;
let project: { id: string; key: string };
let hidden: { id: string; key: string };

beforeAll(async () => {
  app = await startTestApp();
  const sql = app.db.sql;
  ws = await makeWorkspace(sql);
  owner = await makeUser(sql, ws, { role: 'owner', name: 'Olga "the owner" Österberg' });
  member = await makeUser(sql, ws, { role: 'member', name: 'Mem Ber' });
  const client = await makeClient(sql, ws);
  clientUser = await makeUser(sql, ws, { role: 'client', clientId: client.id });
  project = await makeProject(sql, ws, { billingClientId: client.id, members: [{ person: member }] });
  hidden = await makeProject(sql, ws, {});
});
afterAll(() => app.close());

async function principalOf(person: Person): Promise<Principal> {
  const { token } = await makeToken(app.db.sql, ws, person);
  return app.verifier.verify(token, ws.slug, new Date());
}

/** The events of the page in both forms (the REST door's text, the object form), checked to agree. */
async function pageEvents(person: Person, ref: string): Promise<Record<string, unknown>[]> {
  const principal = await principalOf(person);
  const ctx = { sql: app.db.sql, principal, now: () => new Date() };
  const text = await runOp(readTicketPageJson, ctx, { ref });
  if (text.status !== 200) throw new Error('expected the page');
  const fromText = (JSON.parse(text.page.jsonText.toString()) as { events: Record<string, unknown>[] }).events;
  const object = await getTicketPage(ctx, ref);
  expect(fromText).toEqual(JSON.parse(JSON.stringify(object.events)));
  return fromText;
}

/** The timeline as the page built it from the rows before sql/105, written out here as the reference. */
async function builtFromRows(person: Person, ticketId: string): Promise<unknown[]> {
  const sql = app.db.sql;
  const p = await principalOf(person);
  const [row] = await sql<{ events: unknown[] }[]>`
    select coalesce((
      select json_agg(json_build_object(
               'id', e.id, 'kind', e.kind,
               'actor', case when ei.id is null then null else json_build_object('id', ei.id, 'name', ${personNameSql(sql, sql`t.workspace_id`, 'ei')}) end,
               'subject', e.subject, 'payload', ${eventPayload(sql, p, 'e')}, 'createdAt', ${isoSql(sql, sql`e.created_at`)})
             order by e.created_at, e.seq)
      from ticket_events e left join identities ei on ei.id = e.actor_id
      where e.ticket_id = t.id and ${visibleEvent(sql, p, 'e')}), '[]'::json) as events
    from tickets t where t.id = ${ticketId}`;
  return row!.events;
}

describe('the timeline from the text each event keeps', () => {
  it('is the timeline built from the rows, for an owner, a member and a client user', async () => {
    const sql = app.db.sql;
    const t = await makeTicket(sql, ws, { projectId: project.id, reporterId: clientUser.id });
    const parent = await makeTicket(sql, ws, { projectId: project.id });
    const secret = await makeTicket(sql, ws, { projectId: hidden.id });
    const tricky = 'quotes " and \\ backslash, a\nline break, a\ttab, </script>, emoji 🚀, ümlaut';
    await recordEvents(
      sql,
      [
        { workspaceId: ws.id, ticketId: t.id, kind: 'field_changed', actorId: owner.id, payload: { field: 'title', old: tricky, new: 'plain' } },
        { workspaceId: ws.id, ticketId: t.id, kind: 'comment_added', actorId: member.id, subject: tricky, payload: { audience: 'internal' } },
        { workspaceId: ws.id, ticketId: t.id, kind: 'comment_added', actorId: member.id, payload: { audience: 'client', nested: { a: [1, 2.5, null, true] } } },
        { workspaceId: ws.id, ticketId: t.id, kind: 'archived', actorId: null, payload: {} },
        { workspaceId: ws.id, ticketId: t.id, kind: 'time_logged', actorId: member.id, payload: { minutes: 30 } },
        // the kinds whose payload depends on the reader: a parent a member sees, one in a project it does not
        { workspaceId: ws.id, ticketId: t.id, kind: 'parent_changed', actorId: owner.id, payload: { old: null, new: parent.id } },
        { workspaceId: ws.id, ticketId: t.id, kind: 'parent_changed', actorId: owner.id, payload: { old: parent.id, new: secret.id } },
        {
          workspaceId: ws.id,
          ticketId: t.id,
          kind: 'moved',
          actorId: owner.id,
          payload: { fromProjectId: hidden.id, fromHumanId: `${hidden.key}-9`, toProjectId: project.id, toHumanId: t.humanId },
        },
      ],
      new Date(),
    );
    const seen: Record<string, string[]> = {};
    for (const person of [owner, member, clientUser]) {
      const events = await pageEvents(person, t.humanId);
      expect(events).toEqual(await builtFromRows(person, t.id));
      seen[person.role] = events.map((e) => e.kind as string);
    }
    // what each reader sees differs, so the comparisons above covered each rule
    expect(seen).toEqual({
      owner: ['field_changed', 'comment_added', 'comment_added', 'archived', 'time_logged', 'parent_changed', 'parent_changed', 'moved'],
      member: ['field_changed', 'comment_added', 'comment_added', 'archived', 'time_logged', 'parent_changed', 'parent_changed', 'moved'],
      client: ['field_changed', 'comment_added', 'archived', 'moved'],
    });
    const [first] = await pageEvents(owner, t.humanId).then((es) => es.filter((e) => e.kind === 'field_changed'));
    expect(first).toMatchObject({ actor: { id: owner.id, name: 'Olga "the owner" Österberg' }, payload: { old: tricky } });
    // a client user may not name the project the ticket came from
    const [moved] = await pageEvents(clientUser, t.humanId).then((es) => es.filter((e) => e.kind === 'moved'));
    expect(moved!.payload).toMatchObject({ fromProjectId: null, fromHumanId: null, toProjectId: project.id });
  });

  it('shows the name a person has now, and a redaction, though both came after the event', async () => {
    const sql = app.db.sql;
    const t = await makeTicket(sql, ws, { projectId: project.id });
    await recordEvents(
      sql,
      [{ workspaceId: ws.id, ticketId: t.id, kind: 'field_changed', actorId: member.id, payload: { field: 'title', old: 'secret plan', new: 'x' } }],
      new Date(),
    );
    await sql`update identities set name = 'Renamed Member' where id = ${member.id}`;
    expect((await pageEvents(owner, t.humanId)).at(-1)!.actor).toEqual({ id: member.id, name: 'Renamed Member' });
    await sql`insert into contact_names (workspace_id, identity_id, name) values (${ws.id}, ${member.id}, 'Known As')`;
    expect((await pageEvents(owner, t.humanId)).at(-1)!.actor).toEqual({ id: member.id, name: 'Known As' });
    // a change to the stored row (a redaction rewrites payloads and subjects) rewrites its text
    await sql`update ticket_events set payload = payload || '{"old": "[redacted]"}', subject = 'now with a subject' where ticket_id = ${t.id} and kind = 'field_changed'`;
    const last = (await pageEvents(owner, t.humanId)).at(-1)!;
    expect(last).toMatchObject({ subject: 'now with a subject', payload: { field: 'title', old: '[redacted]', new: 'x' } });
    expect(await pageEvents(owner, t.humanId)).toEqual(await builtFromRows(owner, t.id));
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect, type Db } from '../src/db/connect.ts';
import { TokenVerifier } from '../src/core/auth/token-verifier.ts';
import type { Ctx } from '../src/core/ctx.ts';
import { runOp } from '../src/core/operation.ts';
import { logTime } from '../src/core/time/log.ts';
import { startTestApp, type TestApp } from './helpers/app.ts';
import {
  makePeriod,
  makeProject,
  makeToken,
  makeUser,
  makeWorkspace,
  workflowIds,
  type Person,
  type WorkflowIds,
  type Workspace,
} from './helpers/factories.ts';

/**
 * Issue 25, "Load": a creating transaction that is held up must not hold up other creators of
 * the same project. The project's number counter is taken in a statement of its own
 * (src/core/tickets/numbering.ts) and the board's counters are settled at commit
 * (sql/099_board_counts_at_commit.sql); before, both rows stayed locked for the whole transaction.
 */
let app: TestApp;
let ws: Workspace;
let wf: WorkflowIds;
let owner: Person;
let assignee: Person;
let token: string;
let project: { id: string; key: string };
let side: Db;

beforeAll(async () => {
  app = await startTestApp();
  const sql = app.db.sql;
  ws = await makeWorkspace(sql);
  owner = await makeUser(sql, ws, { role: 'owner' });
  assignee = await makeUser(sql, ws, { role: 'member' });
  project = await makeProject(sql, ws, { members: [{ person: assignee }] });
  wf = await workflowIds(sql, ws);
  token = (await makeToken(sql, ws, owner)).token;
  side = connect(app.db.url, { max: 2 });
});
afterAll(async () => {
  await side.end();
  await app.close();
});

const create = (body: Record<string, unknown>) => app.call('POST', `/api/w/${ws.slug}/tickets`, { token, body: { projectId: project.id, ...body } });
const settled = (p: Promise<unknown>) => Promise.race([p.then(() => true), new Promise((r) => setTimeout(() => r(false), 1500))]);

describe('creators of one project do not wait for each other', () => {
  it('a create held up after its number was taken does not hold up the next create in the project (same state, same board counter)', async () => {
    // Hold the assignee's identity row: the held create's ticket insert waits for it (its foreign
    // key check), after the number is taken and with the board's counter of the state written.
    let release!: () => void;
    const released = new Promise<void>((r) => (release = r));
    let holding!: () => void;
    const held = new Promise<void>((r) => (holding = r));
    const holder = side.begin(async (t) => {
      await t`select id from identities where id = ${assignee.id} for update`;
      holding();
      await released;
    });
    await held;
    const slow = create({ title: 'held up', assigneeId: assignee.id, stateId: wf.states.todo });
    // give the held create time to reach its wait (it cannot finish while the row is held)
    expect(await settled(slow)).toBe(false);
    const fast = create({ title: 'not held up', stateId: wf.states.todo });
    expect(await settled(fast), 'the second create finished while the first was held').toBe(true);
    release();
    await holder;
    const [a, b] = [await slow, await fast];
    expect(a.status, JSON.stringify(a.body)).toBe(201);
    expect(b.status, JSON.stringify(b.body)).toBe(201);
    // numbers are distinct; the held create took its number first
    const n = (r: typeof a) => Number(String(r.body.humanId).split('-')[1]);
    expect(n(a)).toBeLessThan(n(b));
  });

  it('the board totals count both, once committed', async () => {
    const board = await app.call('GET', `/api/w/${ws.slug}/board`, { token });
    expect(board.status).toBe(200);
    const todo = board.body.columns.find((c: { state: { id: string } }) => c.state.id === wf.states.todo);
    const rows = await app.db.sql<{ n: number }[]>`
      select count(*)::int as n from tickets where workspace_id = ${ws.id} and state_id = ${wf.states.todo!} and not archived`;
    const n = rows[0]!.n;
    expect(todo.total).toBe(n);
    expect(n).toBeGreaterThanOrEqual(2);
  });

  it('a refused create takes no number: the next ticket gets the next number', async () => {
    const before = await create({ title: 'one' });
    expect(before.status).toBe(201);
    const refused = await create({ title: 'bad', labelIds: ['00000000-0000-4000-8000-000000000000'] });
    expect(refused.status).toBe(400);
    const after = await create({ title: 'two' });
    expect(Number(after.body.humanId.split('-')[1])).toBe(Number(before.body.humanId.split('-')[1]) + 1);
  });

  it('a rolled-back transaction leaves the board counters as they were; a bulk insert counts every row (test/workflow-admin covers a deleted state)', async () => {
    const count = async () => (await app.db.sql<{ n: number }[]>`select coalesce(sum(n), 0)::int as n from board_counts where workspace_id = ${ws.id}`)[0]!.n;
    const before = await count();
    await app.db.sql
      .begin(async (t) => {
        await t`update tickets set state_id = ${wf.states.done!} where workspace_id = ${ws.id}`;
        throw new Error('roll back');
      })
      .catch(() => {});
    await app.db.sql`insert into tickets (id, workspace_id, project_id, number, title, kind_id, state_id, priority_id, reporter_id)
      select gen_random_uuid(), ${ws.id}, null, 100000 + g, 'bulk', ${wf.kinds.task!}, ${wf.states.todo!}, ${wf.priorities.normal!}, ${owner.id}
      from generate_series(1, 3) g`;
    expect(await count()).toBe(before + 3);
    const rows = await app.db.sql<{ n: number }[]>`select count(*)::int as n from tickets where workspace_id = ${ws.id} and not archived`;
    expect(await count()).toBe(rows[0]!.n);
  });
});

describe('people logging time on one ticket do not wait for each other', () => {
  it("logging time leaves the ticket's row unlocked until the transaction commits, and moves updatedAt at commit", async () => {
    const sql = app.db.sql;
    const today = new Date().toISOString().slice(0, 10);
    await makePeriod(sql, ws, { start: `${today.slice(0, 8)}01`, end: '2099-12-31' });
    const created = await create({ title: 'meetings' });
    expect(created.status).toBe(201);
    const ticketId = created.body.id as string;
    const before = (await sql<{ at: Date }[]>`select updated_at as at from tickets where id = ${ticketId}`)[0]!.at;
    const principal = await new TokenVerifier(sql, 0).verify(token, null, new Date());
    let inside: Date | undefined;
    await sql.begin(async (t) => {
      const ctx: Ctx = { sql: t as never, principal, now: () => new Date(), inTx: true };
      await runOp(logTime, ctx, { ticketId, spentOn: today, minutes: 15 });
      // another writer of the ticket (say a second entry's commit) can take the row now
      const other = await side
        .begin((o) => o`select id from tickets where id = ${ticketId} for no key update nowait`)
        .then(
          () => 'free',
          (e: Error) => e.message,
        );
      expect(other).toBe('free');
      inside = (await t<{ at: Date }[]>`select updated_at as at from tickets where id = ${ticketId}`)[0]!.at;
    });
    expect(inside!.getTime()).toBe(before.getTime());
    const after = (await sql<{ at: Date }[]>`select updated_at as at from tickets where id = ${ticketId}`)[0]!.at;
    expect(after.getTime()).toBeGreaterThan(before.getTime());
    expect((await sql`select count(*)::int as n from ticket_touch_pending`)[0]!.n).toBe(0);
    // the page's ETag and updatedAt moved with it
    const page = await app.call('GET', `/api/w/${ws.slug}/tickets/${ticketId}`, { token });
    expect(new Date(page.body.updatedAt).getTime()).toBe(after.getTime());
  });
});

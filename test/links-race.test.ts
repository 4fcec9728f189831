import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './helpers/app.ts';
import { makeProject, makeTicket, makeToken, makeUser, makeWorkspace, type Workspace } from './helpers/factories.ts';

let app: TestApp;
let ws: Workspace;
let projectId: string;
let token: string;

beforeAll(async () => {
  app = await startTestApp();
  ws = await makeWorkspace(app.db.sql);
  const member = await makeUser(app.db.sql, ws, { role: 'member' });
  projectId = (await makeProject(app.db.sql, ws, { members: [{ person: member }] })).id;
  token = (await makeToken(app.db.sql, ws, member)).token;
});
afterAll(() => app.close());

const link = (ref: string, body: unknown) => app.call('POST', `/api/w/${ws.slug}/tickets/${ref}/links`, { token, body });
const ticket = () => makeTicket(app.db.sql, ws, { projectId });

/** Whether the stored blocking links of the workspace contain a cycle. */
async function hasBlockingCycle(): Promise<boolean> {
  const [row] = await app.db.sql<{ cycle: boolean }[]>`
    with recursive walk (start, id, depth) as (
      select source_id, target_id, 1 from ticket_links where workspace_id = ${ws.id} and kind = 'blocks'
      union
      select w.start, l.target_id, w.depth + 1 from walk w join ticket_links l on l.source_id = w.id and l.kind = 'blocks' where w.depth < 50
    )
    select coalesce(bool_or(start = id), false) as cycle from walk`;
  return row!.cycle;
}

describe('link writes under concurrency', () => {
  it('racing "A blocks B" against "B blocks A" many times never stores a cycle', async () => {
    for (let i = 0; i < 30; i++) {
      const [a, b] = [await ticket(), await ticket()];
      const [r1, r2] = await Promise.all([link(a.humanId, { targetId: b.id, kind: 'blocks' }), link(b.humanId, { targetId: a.id, kind: 'blocks' })]);
      expect([r1.status, r2.status].sort()).toEqual([201, 409]);
      expect([r1, r2].find((r) => r.status === 409)!.body.error.details.reason).toBe('dependency_cycle');
    }
    expect(await hasBlockingCycle()).toBe(false);
  });

  it('racing the closing links of a three-ticket loop never stores the loop', async () => {
    for (let i = 0; i < 15; i++) {
      const [a, b, c] = [await ticket(), await ticket(), await ticket()];
      const results = await Promise.all([
        link(a.humanId, { targetId: b.id, kind: 'blocks' }),
        link(b.humanId, { targetId: c.id, kind: 'blocks' }),
        link(c.humanId, { targetId: a.id, kind: 'blocks' }),
      ]);
      expect(results.filter((r) => r.status === 201)).toHaveLength(2);
      expect(results.filter((r) => r.status === 409)).toHaveLength(1);
    }
    expect(await hasBlockingCycle()).toBe(false);
  });

  it('racing the same symmetric link from both ends stores it once', async () => {
    for (let i = 0; i < 15; i++) {
      const [a, b] = [await ticket(), await ticket()];
      const [r1, r2] = await Promise.all([link(a.humanId, { targetId: b.id, kind: 'relates' }), link(b.humanId, { targetId: a.id, kind: 'relates' })]);
      expect([r1.status, r2.status]).toEqual([201, 201]);
      expect([r1.body.id, r2.body.id].filter((id) => id === null)).toHaveLength(1);
      const [n] = await app.db.sql<{ n: number }[]>`select count(*)::int as n from ticket_links where source_id = any(${[a.id, b.id]}::uuid[])`;
      expect(n!.n).toBe(1);
    }
  });

  it('two links that are each within the depth limit but not together: one is refused', async () => {
    for (let i = 0; i < 8; i++) {
      const chain = async (edges: number) => {
        const out = [await ticket()];
        for (let k = 0; k < edges; k++) {
          const next = await ticket();
          await link(out[out.length - 1]!.humanId, { targetId: next.id, kind: 'blocks' });
          out.push(next);
        }
        return out;
      };
      const x = await chain(5);
      const z = await ticket();
      const y = await chain(4);
      const [r1, r2] = await Promise.all([link(x[5]!.humanId, { targetId: z.id, kind: 'blocks' }), link(z.humanId, { targetId: y[0]!.id, kind: 'blocks' })]);
      expect([r1.status, r2.status].sort()).toEqual([201, 409]);
      expect([r1, r2].find((r) => r.status === 409)!.body.error.details).toMatchObject({ reason: 'dependency_depth', depth: 11 });
    }
  });
});

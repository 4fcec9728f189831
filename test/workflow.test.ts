import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './helpers/app.ts';
import { makeToken, makeUser, makeWorkspace } from './helpers/factories.ts';

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(() => app.close());

it('GET /workflow returns states in order with flags, kinds, priorities and labels', async () => {
  const ws = await makeWorkspace(app.db.sql);
  const client = await makeUser(app.db.sql, ws, { role: 'member' });
  const { token } = await makeToken(app.db.sql, ws, client, { scopes: ['read'] });
  const res = await app.call('GET', `/api/w/${ws.slug}/workflow`, { token });
  expect(res.status).toBe(200);
  const { states, kinds, priorities, labels } = res.body;
  expect(states.map((s: any) => s.key)).toEqual(['triage', 'todo', 'in_progress', 'in_review', 'done', 'cancelled']);
  expect(states.map((s: any) => s.position)).toEqual([0, 1, 2, 3, 4, 5]);
  expect(states.filter((s: any) => s.isDefault).map((s: any) => s.key)).toEqual(['todo']);
  expect(states.filter((s: any) => s.isCustomerResolve).map((s: any) => s.key)).toEqual(['done']);
  expect(states.find((s: any) => s.key === 'cancelled')).toMatchObject({ category: 'closed', name: 'Cancelled', id: expect.any(String) });
  expect(kinds.filter((k: any) => k.isInbound)).toHaveLength(1);
  expect(priorities[0]).toMatchObject({ key: 'urgent', position: 0 });
  expect(priorities.filter((p: any) => p.isDefault).map((p: any) => p.key)).toEqual(['normal']);
  expect(labels.length).toBeGreaterThan(0);
  expect(labels[0]).toEqual({ id: expect.any(String), name: expect.any(String), color: null });
});

it('one workspace never sees another workspace’s workflow', async () => {
  const a = await makeWorkspace(app.db.sql);
  const b = await makeWorkspace(app.db.sql);
  await app.db.sql`insert into labels (workspace_id, name) values (${b.id}, 'only-in-b')`;
  const person = await makeUser(app.db.sql, a);
  const { token } = await makeToken(app.db.sql, a, person);
  const res = await app.call('GET', `/api/w/${a.slug}/workflow`, { token });
  expect(res.body.labels.map((l: any) => l.name)).not.toContain('only-in-b');
});

it('a change to the workflow shows at once although the workflow is cached', async () => {
  const ws = await makeWorkspace(app.db.sql);
  const person = await makeUser(app.db.sql, ws);
  const { token } = await makeToken(app.db.sql, ws, person);
  const names = async () => (await app.call('GET', `/api/w/${ws.slug}/workflow`, { token })).body.labels.map((l: any) => l.name);
  expect(await names()).not.toContain('fresh-label');
  await app.db.sql`insert into labels (workspace_id, name) values (${ws.id}, 'fresh-label')`;
  let seen = await names();
  for (let i = 0; i < 20 && !seen.includes('fresh-label'); i++) {
    await new Promise((r) => setTimeout(r, 50));
    seen = await names();
  }
  expect(seen).toContain('fresh-label');
});

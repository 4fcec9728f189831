import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { login, startTestApp, type SessionCookie, type TestApp } from './helpers/app.ts';
import { makeProject, makeUser, makeWorkspace, type Person, type Workspace } from './helpers/factories.ts';

/**
 * Renaming a project key (issue 22): every human id the project ever gave keeps opening its ticket
 * (the old prefix and the current one, with any number the ticket had), ticket_refs keep their
 * numbers, a new ticket gets the new prefix, and no other project may take an old key.
 */

let app: TestApp;
let ws: Workspace;
let owner: Person;
let session: SessionCookie;

const W = () => `/api/w/${ws.slug}`;
const call = (method: string, path: string, body?: unknown) => app.call(method, `${W()}${path}`, { session, body });

beforeAll(async () => {
  app = await startTestApp();
  ws = await makeWorkspace(app.db.sql);
  owner = await makeUser(app.db.sql, ws, { role: 'owner' });
  session = await login(app, owner.email, owner.password);
});
afterAll(() => app.close());

describe('PATCH /projects/{id} {key}', () => {
  let projectId: string;
  let first: { id: string; humanId: string };
  let second: { id: string; humanId: string };

  beforeAll(async () => {
    projectId = (await call('POST', '/projects', { key: 'ALPHA', name: 'Alpha' })).body.id;
    first = (await call('POST', '/tickets', { projectId, title: 'One' })).body;
    second = (await call('POST', '/tickets', { projectId, title: 'Two' })).body;
  });

  it('renames the key: the project lists its former key, and the event is in the audit log', async () => {
    const res = await call('PATCH', `/projects/${projectId}`, { key: 'beta' });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ key: 'BETA', formerKeys: ['ALPHA'] });
    const [audit] = await app.db.sql`select detail from ops_audit where workspace_id = ${ws.id} and action = 'projects.update' and outcome = 'succeeded'`;
    expect(audit!.detail).toBe('key BETA');
  });

  it('old human ids still open the tickets, and so do the new prefix with the old numbers; the page shows the new human id', async () => {
    expect(first.humanId).toBe('ALPHA-1');
    for (const ref of ['ALPHA-1', 'alpha-1', 'BETA-1']) {
      const res = await call('GET', `/tickets/${ref}`);
      expect(res.status, ref).toBe(200);
      expect(res.body.id, ref).toBe(first.id);
      expect(res.body.humanId, ref).toBe('BETA-1');
    }
    expect((await call('GET', `/tickets/ALPHA-2`)).body.id).toBe(second.id);
    expect((await call('GET', `/tickets/ALPHA-3`)).status).toBe(404);
  });

  it('ticket_refs keep the numbers the tickets had (nothing renumbered), and the old ids resolve through them', async () => {
    const refs = await app.db.sql<{ ticketId: string; number: number; projectId: string }[]>`
      select ticket_id as "ticketId", number, project_id as "projectId" from ticket_refs where workspace_id = ${ws.id} order by number`;
    expect(refs).toEqual([
      { ticketId: first.id, number: 1, projectId },
      { ticketId: second.id, number: 2, projectId },
    ]);
    const prefixes = await app.db.sql<{ prefix: string }[]>`select prefix from project_prefixes where project_id = ${projectId} order by prefix`;
    expect(prefixes.map((p) => p.prefix)).toEqual(['ALPHA', 'BETA']);
  });

  it('a new ticket gets the new prefix and the next number', async () => {
    const res = await call('POST', '/tickets', { projectId, title: 'Three' });
    expect(res.status).toBe(201);
    expect(res.body.humanId).toBe('BETA-3');
    expect((await call('GET', '/tickets/ALPHA-3')).body.id).toBe(res.body.id);
  });

  it('a search for an old human id finds the ticket', async () => {
    const res = await call('GET', '/tickets?q=ALPHA-2');
    expect(res.status).toBe(200);
    expect(res.body.items.map((t: { id: string }) => t.id)).toContain(second.id);
  });

  it('another project may not take the old key (409 key_taken), on create or on rename', async () => {
    const create = await call('POST', '/projects', { key: 'ALPHA', name: 'Impostor' });
    expect(create.status).toBe(409);
    expect(create.body.error.details).toMatchObject({ reason: 'key_taken', field: 'key', key: 'ALPHA' });
    const other = await makeProject(app.db.sql, ws, { key: 'GAMMA' });
    const rename = await call('PATCH', `/projects/${other.id}`, { key: 'alpha' });
    expect(rename.status).toBe(409);
    expect(rename.body.error.details).toMatchObject({ reason: 'key_taken' });
  });

  it('the project may take its old key back; both keys keep resolving', async () => {
    const res = await call('PATCH', `/projects/${projectId}`, { key: 'ALPHA' });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ key: 'ALPHA', formerKeys: ['BETA'] });
    expect((await call('GET', '/tickets/BETA-3')).body.humanId).toBe('ALPHA-3');
    expect((await call('POST', '/tickets', { projectId, title: 'Four' })).body.humanId).toBe('ALPHA-4');
  });

  it('a moved ticket keeps its old number under a renamed prefix too', async () => {
    const dest = (await call('POST', '/projects', { key: 'DEST', name: 'Destination' })).body.id;
    const moved = await call('POST', `/tickets/${first.id}/move`, { projectId: dest });
    expect(moved.status).toBe(200);
    expect(moved.body.humanId).toBe('DEST-1');
    await call('PATCH', `/projects/${projectId}`, { key: 'OMEGA' });
    for (const ref of ['ALPHA-1', 'BETA-1', 'OMEGA-1', 'DEST-1']) expect((await call('GET', `/tickets/${ref}`)).body.id, ref).toBe(first.id);
  });
});

import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { login } from '../src/core/auth/sessions.ts';
import { runPublicOp } from '../src/core/operation.ts';
import { addPerson } from '../src/core/people/users.ts';
import { makeUser, makeWorkspace, type Workspace } from './helpers/factories.ts';
import { testDb, type TestDb } from './helpers/db.ts';

let db: TestDb;
let ws: Workspace;

beforeAll(async () => {
  db = await testDb();
  ws = await makeWorkspace(db.sql);
});
afterAll(() => db.close());

describe('addPerson writes the identity and the membership together', () => {
  it('a refused membership (unknown workspace) leaves no new identity behind', async () => {
    const email = `orphan-${randomUUID()}@example.test`;
    await expect(addPerson(db.sql, { workspaceId: randomUUID(), email, name: 'Orphan', role: 'member', password: 'pw-orphan-secret' })).rejects.toMatchObject({
      code: '23503',
    });
    expect(await db.sql`select 1 from identities where lower(email) = lower(${email})`).toHaveLength(0);
  });

  it("a refused membership leaves an existing identity's password as it was", async () => {
    const person = await makeUser(db.sql, ws);
    await expect(
      addPerson(db.sql, { workspaceId: randomUUID(), email: person.email, name: 'Again', role: 'member', password: 'a-new-password' }),
    ).rejects.toMatchObject({
      code: '23503',
    });
    const ctx = { sql: db.sql, now: () => new Date(), ttlHours: 1 };
    await expect(runPublicOp(login, ctx, { email: person.email, password: 'a-new-password' })).rejects.toMatchObject({ code: 'unauthenticated' });
    await expect(runPublicOp(login, ctx, { email: person.email, password: person.password })).resolves.toMatchObject({ info: { identityId: person.id } });
  });
});

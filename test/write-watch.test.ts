import { afterAll, beforeAll, expect, it } from 'vitest';
import { changedTables, tableState } from './helpers/db-state.ts';
import { testDb, type TestDb } from './helpers/db.ts';
import { makeToken, makeUser, makeWorkspace, type Person, type Workspace } from './helpers/factories.ts';
import { watchWrites, writeMark, writesSince } from './helpers/write-watch.ts';

/**
 * The fuzz's "a refused request changes nothing" reads test/helpers/write-watch.ts's log instead of
 * checksumming every table twice per case. This pins that the log sees exactly what the checksum
 * sees (and a little more): each kind of write, committed or rolled back, compared with tableState.
 */
let db: TestDb;
let ws: Workspace;
let owner: Person;
let tokenId: string;

beforeAll(async () => {
  db = await testDb();
  ws = await makeWorkspace(db.sql);
  owner = await makeUser(db.sql, ws, { role: 'owner' });
  tokenId = (await makeToken(db.sql, ws, owner)).id;
  await watchWrites(db.sql);
});
afterAll(() => db?.close());

/** What both detectors say about `write`: the tables the log names, and the tables the checksum names. */
async function both(write: () => Promise<unknown>): Promise<{ logged: string[]; checksum: string[] }> {
  const before = await tableState(db.sql);
  const mark = await writeMark(db.sql);
  await write().catch(() => undefined);
  return { logged: [...(await writesSince(db.sql, mark)).keys()].sort(), checksum: changedTables(before, await tableState(db.sql)) };
}

it('names a committed insert, update and delete, as the checksum does', async () => {
  expect(await both(() => db.sql`insert into consultant_categories (workspace_id, name) values (${ws.id}, 'Design')`)).toEqual({
    logged: ['consultant_categories'],
    checksum: ['consultant_categories'],
  });
  expect(await both(() => db.sql`update consultant_categories set name = 'UX' where workspace_id = ${ws.id}`)).toEqual({
    logged: ['consultant_categories'],
    checksum: ['consultant_categories'],
  });
  expect(await both(() => db.sql`delete from consultant_categories where workspace_id = ${ws.id}`)).toEqual({
    logged: ['consultant_categories'],
    checksum: ['consultant_categories'],
  });
});

it('names nothing for a rolled-back write, an update to the same values, or the volatile columns', async () => {
  const none = { logged: [], checksum: [] };
  expect(
    await both(() =>
      db.sql.begin(async (tx) => {
        await tx`insert into consultant_categories (workspace_id, name) values (${ws.id}, 'Rolled back')`;
        throw new Error('refused');
      }),
    ),
  ).toEqual(none);
  expect(await both(() => db.sql`update workspaces set name = name where id = ${ws.id}`)).toEqual(none);
  expect(await both(() => db.sql`update api_tokens set last_used_at = now() where id = ${tokenId}`)).toEqual(none);
});

it('counts rows per table and operation', async () => {
  const mark = await writeMark(db.sql);
  await db.sql`insert into consultant_categories (workspace_id, name) values (${ws.id}, 'A'), (${ws.id}, 'B')`;
  await db.sql`delete from consultant_categories where workspace_id = ${ws.id} and name = 'A'`;
  expect(Object.fromEntries(await writesSince(db.sql, mark))).toEqual({ consultant_categories: { INSERT: 2, UPDATE: 0, DELETE: 1 } });
});

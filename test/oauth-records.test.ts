import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sha256 } from '../src/core/auth/secrets.ts';
import { deleteExpiredOAuthRecords, OAuthRecords } from '../src/core/oauth/records.ts';
import { testDb, type TestDb } from './helpers/db.ts';

/** The authorization server's storage: ids (the secrets of codes and tokens) kept only as hashes; expired objects removed. */

let db: TestDb;
beforeAll(async () => {
  db = await testDb();
});
afterAll(async () => {
  await db?.close();
});

describe('oauth records (issue 24)', () => {
  it('stores a token under its hash and without its id, finds it by the secret, and forgets it once expired', async () => {
    let now = new Date('2030-01-01T00:00:00Z');
    const tokens = new OAuthRecords(db.sql, 'AccessToken', () => now);
    const secret = 'secret-access-token-value-0123456789abcdef';
    await tokens.upsert(secret, { jti: secret, grantId: 'g1', scope: 'read', exp: 1 }, 60);
    const [row] = await db.sql<{ id_hash: Buffer; payload: unknown }[]>`select id_hash, payload from oauth_records where model = 'AccessToken'`;
    expect(row!.id_hash.equals(sha256(secret))).toBe(true);
    expect(JSON.stringify(row!.payload)).not.toContain(secret);
    expect(await tokens.find(secret)).toMatchObject({ jti: secret, grantId: 'g1', scope: 'read' });
    await tokens.consume(secret);
    expect(await tokens.find(secret)).toMatchObject({ consumed: true });
    now = new Date(now.getTime() + 61_000);
    expect(await tokens.find(secret)).toBeUndefined();
    expect(await deleteExpiredOAuthRecords(db.sql, now)).toBe(1);
    expect((await db.sql`select 1 from oauth_records where model = 'AccessToken'`).length).toBe(0);
  });
});

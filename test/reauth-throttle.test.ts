import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { login, startTestApp, type SessionCookie, type TestApp } from './helpers/app.ts';
import { makeUser, makeWorkspace, type Person, type Workspace } from './helpers/factories.ts';

// Defect 10 of issue 9: POST /api/auth/reauth took unlimited password guesses.

let app: TestApp;
let ws: Workspace;

beforeAll(async () => {
  // every request comes from 127.0.0.1: the per-address limit is tested on its own below
  app = await startTestApp({ env: { LOGIN_MAX_FAILURES_PER_ADDRESS: '100000' } });
  ws = await makeWorkspace(app.db.sql);
});
afterAll(() => app.close());

const reauth = (a: TestApp, session: SessionCookie, password: string) => a.call('POST', '/api/auth/reauth', { session, body: { password } });
const tryLogin = (a: TestApp, email: string, password: string) => a.call('POST', '/api/auth/login', { body: { email, password } });

function expectThrottled(res: { status: number; body: any; headers: Headers }) {
  expect(res.status).toBe(429);
  expect(res.body.error).toMatchObject({ code: 'rate_limited', details: { reason: 'too_many_attempts' } });
  expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(0);
}

describe('re-authentication is throttled like login', () => {
  it('30 wrong passwords: the first 10 are 403 wrong_password, then 429, and the right password is refused too', async () => {
    const person = await makeUser(app.db.sql, ws, { role: 'member' });
    const session = await login(app, person.email, person.password);
    const statuses: number[] = [];
    for (let i = 0; i < 30; i++) statuses.push((await reauth(app, session, 'wrong password')).status);
    expect(statuses.slice(0, 10)).toEqual(Array(10).fill(403));
    expect(new Set(statuses.slice(10))).toEqual(new Set([429]));
    expectThrottled(await reauth(app, session, person.password));
  });

  it('parallel guesses cannot slip past the limit', async () => {
    const person = await makeUser(app.db.sql, ws, { role: 'member' });
    const session = await login(app, person.email, person.password);
    const results = await Promise.all(Array.from({ length: 25 }, () => reauth(app, session, 'wrong password')));
    expect(results.filter((r) => r.status === 403)).toHaveLength(10);
    expect(results.filter((r) => r.status === 429)).toHaveLength(15);
  });

  it('failed re-authentications count against the login limit of the same person', async () => {
    const person = await makeUser(app.db.sql, ws, { role: 'member' });
    const session = await login(app, person.email, person.password);
    for (let i = 0; i < 10; i++) expect((await reauth(app, session, 'wrong password')).status).toBe(403);
    expectThrottled(await tryLogin(app, person.email.toUpperCase(), person.password));
  });

  it('failed logins count against re-authentication', async () => {
    const person = await makeUser(app.db.sql, ws, { role: 'member' });
    const session = await login(app, person.email, person.password);
    for (let i = 0; i < 10; i++) expect((await tryLogin(app, person.email, 'wrong password')).status).toBe(401);
    expectThrottled(await reauth(app, session, person.password));
  });

  it('a successful re-authentication clears the count; someone else is unaffected', async () => {
    const person = await makeUser(app.db.sql, ws, { role: 'member' });
    const other: Person = await makeUser(app.db.sql, ws, { role: 'member' });
    const session = await login(app, person.email, person.password);
    for (let i = 0; i < 9; i++) expect((await reauth(app, session, 'wrong password')).status).toBe(403);
    const ok = await reauth(app, session, person.password);
    expect(ok.status).toBe(200);
    expect(ok.body.ok).toBe(true);
    for (let i = 0; i < 9; i++) expect((await reauth(app, session, 'wrong password')).status).toBe(403);
    expect((await reauth(app, session, person.password)).status).toBe(200);
    const otherSession = await login(app, other.email, other.password);
    expect((await reauth(app, otherSession, other.password)).status).toBe(200);
  });
});

describe('per address', () => {
  it('failed re-authentications of different people from one address share the address limit', async () => {
    const small = await startTestApp({ env: { LOGIN_MAX_FAILURES_PER_ADDRESS: '5', LOGIN_MAX_FAILURES_PER_EMAIL: '100' } });
    try {
      const w = await makeWorkspace(small.db.sql);
      const people = await Promise.all([1, 2, 3].map(() => makeUser(small.db.sql, w, { role: 'member' })));
      const sessions = await Promise.all(people.map((p) => login(small, p.email, p.password)));
      const statuses: number[] = [];
      for (let i = 0; i < 6; i++) statuses.push((await reauth(small, sessions[i % 3]!, 'wrong password')).status);
      expect(statuses).toEqual([403, 403, 403, 403, 403, 429]);
      expectThrottled(await reauth(small, sessions[2]!, people[2]!.password));
      expectThrottled(await tryLogin(small, people[0]!.email, people[0]!.password));
    } finally {
      await small.close();
    }
  });
});

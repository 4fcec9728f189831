import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { login, startTestApp, type CallResult, type SessionCookie, type TestApp } from './helpers/app.ts';
import { makeToken, makeUser, makeWorkspace, type Workspace } from './helpers/factories.ts';

/**
 * The contract's order is credential first: a caller lacking the scope or the session is 403
 * even when a path id is malformed; only a caller who may call the operation learns that the id
 * is not a UUID (400 `bad_uuid` naming the field). The core parses path ids after authorizing.
 */

let app: TestApp;
let ws: Workspace;
let session: SessionCookie;
let readOnly: string;
let writeOnly: string;
let full: string;
let administer: string;

beforeAll(async () => {
  app = await startTestApp();
  ws = await makeWorkspace(app.db.sql);
  const owner = await makeUser(app.db.sql, ws, { role: 'owner' });
  session = await login(app, owner.email, owner.password);
  readOnly = (await makeToken(app.db.sql, ws, owner, { scopes: ['read'] })).token;
  writeOnly = (await makeToken(app.db.sql, ws, owner, { scopes: ['write'] })).token;
  full = (await makeToken(app.db.sql, ws, owner, { scopes: ['read', 'write', 'triage'] })).token;
  administer = (await makeToken(app.db.sql, ws, owner, { scopes: ['admin'] })).token;
});
afterAll(() => app.close());

const api = () => `/api/w/${ws.slug}`;

function expectRefused(res: CallResult, reason: string) {
  expect(res.status, JSON.stringify(res.body)).toBe(403);
  expect(res.body.error).toMatchObject({ code: 'forbidden', details: expect.objectContaining({ reason }) });
}

function expectBadUuid(res: CallResult, field: string) {
  expect(res.status, JSON.stringify(res.body)).toBe(400);
  expect(res.body.error).toMatchObject({ code: 'invalid', details: { reason: 'bad_uuid', field } });
}

interface Case {
  method: string;
  path: string;
  body?: unknown;
  field: string;
}

/** Token routes: a token without the scope is refused before the id is read. */
const scoped: (Case & { weak: () => string })[] = [
  { method: 'PATCH', path: '/tickets/X-1/comments/not-a-uuid', body: { body: 'x' }, field: 'commentId', weak: () => readOnly },
  { method: 'DELETE', path: '/tickets/X-1/comments/not-a-uuid', field: 'commentId', weak: () => readOnly },
  { method: 'DELETE', path: '/tickets/X-1/links/not-a-uuid', field: 'linkId', weak: () => readOnly },
  { method: 'DELETE', path: '/tickets/X-1/codehost/not-a-uuid', field: 'linkId', weak: () => readOnly },
  { method: 'PATCH', path: '/time/not-a-uuid', body: { minutes: 5 }, field: 'id', weak: () => readOnly },
  { method: 'GET', path: '/attachments/not-a-uuid/download', field: 'attachmentId', weak: () => writeOnly },
];

/** Session-only routes: any token is refused before the id is read. */
const sessionOnly: Case[] = [
  { method: 'DELETE', path: '/tokens/not-a-uuid', field: 'id' },
  { method: 'DELETE', path: '/tickets/X-1/viewers/not-a-uuid', field: 'identityId' },
  { method: 'POST', path: '/tickets/X-1/redact', body: { reason: 'probe' }, field: 'id' },
  { method: 'DELETE', path: '/time/not-a-uuid', field: 'id' },
  { method: 'POST', path: '/time/not-a-uuid/corrections', body: { minutes: -5 }, field: 'id' },
  { method: 'POST', path: '/time/tickets/X-1/reattribute', field: 'id' },
  { method: 'POST', path: '/periods/not-a-uuid/close', field: 'id' },
  { method: 'POST', path: '/periods/not-a-uuid/reopen', field: 'id' },
];

/** Administration (issue 22): a token without the admin scope is refused before the id is read; a session or an admin token reach it. */
const adminScoped: Case[] = [
  { method: 'PATCH', path: '/members/not-a-uuid', body: { timezone: 'UTC' }, field: 'identityId' },
  { method: 'POST', path: '/members/not-a-uuid/deactivate', field: 'identityId' },
  { method: 'POST', path: '/invitations/not-a-uuid/resend', field: 'id' },
  { method: 'PUT', path: '/projects/not-a-uuid/members/also-not/category', body: { categoryId: null }, field: 'projectId' },
];

describe('credential before path id', () => {
  it.each(adminScoped)('$method $path: a token without the admin scope is 403 missing_scope, an admin token 400 bad_uuid', async (c) => {
    const opts = c.body === undefined ? {} : { body: c.body };
    expectRefused(await app.call(c.method, `${api()}${c.path}`, { ...opts, token: full }), 'missing_scope');
    expectBadUuid(await app.call(c.method, `${api()}${c.path}`, { ...opts, token: administer }), c.field);
    expectBadUuid(await app.call(c.method, `${api()}${c.path}`, { ...opts, session }), c.field);
  });

  it.each(scoped)('$method $path: a token lacking the scope is 403 missing_scope, a full token 400 bad_uuid', async (c) => {
    const opts = c.body === undefined ? {} : { body: c.body };
    expectRefused(await app.call(c.method, `${api()}${c.path}`, { ...opts, token: c.weak() }), 'missing_scope');
    expectBadUuid(await app.call(c.method, `${api()}${c.path}`, { ...opts, token: full }), c.field);
  });

  it.each(sessionOnly)('$method $path: a token is 403 session_required, a session 400 bad_uuid', async (c) => {
    const opts = c.body === undefined ? {} : { body: c.body };
    expectRefused(await app.call(c.method, `${api()}${c.path}`, { ...opts, token: full }), 'session_required');
    expectBadUuid(await app.call(c.method, `${api()}${c.path}`, { ...opts, session }), c.field);
  });

  it('the second path id is named when only it is malformed', async () => {
    const res = await app.call('PUT', `${api()}/projects/00000000-0000-4000-8000-000000000000/members/also-not/category`, {
      session,
      body: { categoryId: null },
    });
    expectBadUuid(res, 'identityId');
  });
});

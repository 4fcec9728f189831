import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Role, Scope } from '../src/core/auth/principal.ts';
import { login, startTestApp, type SessionCookie, type TestApp } from './helpers/app.ts';
import {
  makeBillingRecipient,
  makeBillingRun,
  makeClient,
  makeDocument,
  makeDocumentGrant,
  makePeriod,
  makeProject,
  makeToken,
  makeUser,
  makeWorkspace,
  type Person,
  type Workspace,
} from './helpers/factories.ts';

/**
 * GET /documents/{id}/download: the download rule (src/core/documents/access.ts) as a matrix over
 * every role and credential kind, then the document's own states and the contract's headers.
 */

let app: TestApp;
let ws: Workspace;
let owner: Person;
let ownerToken: string;
let acme: { id: string };
let globex: { id: string };
let shop: { id: string };
let intranet: { id: string };
let run: { id: string };
let periodId: string;
/** A run of its own: a run holds one timesheet per client (and project) and version. */
const freshRun = async () => (await makeBillingRun(app.db.sql, ws, { periodId })).id;
/** Acme's combined timesheet (html, csv, pdf), the shop project's timesheet (Acme), Globex's combined one. */
const D = {} as Record<'acmeHtml' | 'acmeCsv' | 'acmePdf' | 'shop' | 'globex', { id: string; number: string }>;

const HTML = Buffer.from('<!doctype html><html><body><h1>Acme</h1><p>1,50 h — 31.10.2026</p></body></html>');
const CSV = Buffer.from('number,client,hours\r\nACME-2025-0001,Acme,1.50\r\n');
// a pdf is binary: bytes that are not UTF-8 must come back unchanged
const PDF = Buffer.concat([Buffer.from('%PDF-1.7\n%'), Buffer.from([0xe2, 0xe3, 0xcf, 0xd3, 0x00, 0xff, 0x80]), Buffer.from('\n%%EOF\n')]);

interface Fetched {
  status: number;
  headers: Headers;
  bytes: Buffer;
  json: any;
}

type Auth = { token: string } | { session: SessionCookie } | null;

async function download(id: string, auth: Auth): Promise<Fetched> {
  const headers: Record<string, string> = {};
  if (auth && 'token' in auth) headers.authorization = `Bearer ${auth.token}`;
  if (auth && 'session' in auth) headers.cookie = auth.session.cookie;
  const res = await fetch(`${app.base}/api/w/${ws.slug}/documents/${id}/download`, { headers });
  const bytes = Buffer.from(await res.arrayBuffer());
  const json = (res.headers.get('content-type') ?? '').includes('json') ? JSON.parse(bytes.toString('utf8')) : null;
  return { status: res.status, headers: res.headers, bytes, json };
}

const setContent = (id: string, content: Buffer | null) =>
  app.db.sql`update documents set content = ${content}, bytes = ${content?.length ?? 0} where id = ${id}`;

async function person(role: Role, opts: { clientId?: string } = {}) {
  return makeUser(app.db.sql, ws, { role, clientId: opts.clientId ?? null });
}
const tokenFor = async (p: Person, opts: { scopes?: Scope[]; projectIds?: string[]; kind?: 'agent' } = {}) =>
  ({
    token: (await makeToken(app.db.sql, ws, p, { ...opts, createdBy: opts.kind === 'agent' ? owner.id : undefined })).token,
  }) satisfies Auth;
const sessionFor = async (p: Person) => ({ session: await login(app, p.email, p.password) }) satisfies Auth;
const manage = (p: Person, projectId: string) =>
  app.db
    .sql`insert into project_memberships (workspace_id, project_id, identity_id, access, is_manager) values (${ws.id}, ${projectId}, ${p.id}, 'full', true)`;

beforeAll(async () => {
  app = await startTestApp();
  const sql = app.db.sql;
  ws = await makeWorkspace(sql);
  owner = await makeUser(sql, ws, { role: 'owner' });
  ownerToken = (await makeToken(sql, ws, owner)).token;
  acme = await makeClient(sql, ws, { name: 'Acme' });
  globex = await makeClient(sql, ws, { name: 'Globex' });
  shop = await makeProject(sql, ws, { billingClientId: acme.id });
  intranet = await makeProject(sql, ws, { billingClientId: globex.id });
  const period = await makePeriod(sql, ws, { start: '2025-01-01', end: '2025-01-31', closed: true });
  periodId = period.id;
  run = await makeBillingRun(sql, ws, { periodId });
  D.acmeHtml = await makeDocument(sql, ws, { runId: run.id, clientId: acme.id, number: 'ACME-2025-0001' });
  D.acmeCsv = await makeDocument(sql, ws, { runId: run.id, clientId: acme.id, number: 'ACME-2025-0001', format: 'csv' });
  D.acmePdf = await makeDocument(sql, ws, { runId: run.id, clientId: acme.id, number: 'ACME-2025-0001', format: 'pdf' });
  D.shop = await makeDocument(sql, ws, { runId: run.id, clientId: acme.id, projectId: shop.id, number: 'ACME-2025-0002' });
  D.globex = await makeDocument(sql, ws, { runId: run.id, clientId: globex.id, number: 'GLOBEX-2025-0001' });
  await setContent(D.acmeHtml.id, HTML);
  await setContent(D.acmeCsv.id, CSV);
  await setContent(D.acmePdf.id, PDF);
});
afterAll(() => app.close());

/** What a caller gets for Acme's combined document, the shop project's document and Globex's: a status, or 403 with its reason. */
type Outcome = 200 | 'no_document_access' | 'document_forbidden' | 'combined_document_forbidden';
interface Row {
  who: string;
  auth: () => Promise<Auth>;
  acme: Outcome;
  shop: Outcome;
  globex: Outcome;
}

const ALL: Pick<Row, 'acme' | 'shop' | 'globex'> = { acme: 200, shop: 200, globex: 200 };
const NONE: Pick<Row, 'acme' | 'shop' | 'globex'> = { acme: 'no_document_access', shop: 'no_document_access', globex: 'no_document_access' };
const ACME_ONLY: Pick<Row, 'acme' | 'shop' | 'globex'> = { acme: 200, shop: 200, globex: 'document_forbidden' };

const matrix: Row[] = [
  { who: 'owner, session', auth: () => sessionFor(owner), ...ALL },
  { who: 'owner, delegated token', auth: async () => ({ token: ownerToken }), ...ALL },
  { who: 'owner, read-only token', auth: () => tokenFor(owner, { scopes: ['read'] }), ...ALL },
  { who: 'admin, session', auth: async () => sessionFor(await person('admin')), ...ALL },
  { who: 'admin, delegated token', auth: async () => tokenFor(await person('admin')), ...ALL },
  { who: 'member without grant or managed project, session', auth: async () => sessionFor(await person('member')), ...NONE },
  { who: 'member without grant, token', auth: async () => tokenFor(await person('member')), ...NONE },
  {
    who: 'member with a grant for Acme, session',
    auth: async () => {
      const m = await person('member');
      await makeDocumentGrant(app.db.sql, ws, acme.id, m);
      return sessionFor(m);
    },
    ...ACME_ONLY,
  },
  {
    who: 'member managing the shop project, token: its project document, never a combined one',
    auth: async () => {
      const m = await person('member');
      await manage(m, shop.id);
      return tokenFor(m);
    },
    acme: 'document_forbidden',
    shop: 200,
    globex: 'document_forbidden',
  },
  {
    who: 'member managing the intranet project: not the shop project document',
    auth: async () => {
      const m = await person('member');
      await manage(m, intranet.id);
      return tokenFor(m);
    },
    acme: 'document_forbidden',
    shop: 'document_forbidden',
    globex: 'document_forbidden',
  },
  { who: 'agent, agent token', auth: async () => tokenFor(await person('agent'), { kind: 'agent' }), ...NONE },
  {
    who: 'agent with a grant for Globex, agent token',
    auth: async () => {
      const a = await person('agent');
      await makeDocumentGrant(app.db.sql, ws, globex.id, a);
      return tokenFor(a, { kind: 'agent' });
    },
    acme: 'document_forbidden',
    shop: 'document_forbidden',
    globex: 200,
  },
  {
    who: 'elevated client user of Acme, billing contact with a login, session',
    auth: async () => {
      const c = await person('client_elevated', { clientId: acme.id });
      await makeBillingRecipient(app.db.sql, acme.id, c);
      return sessionFor(c);
    },
    ...ACME_ONLY,
  },
  {
    who: 'elevated client user of Globex, billing contact, token: their own client only',
    auth: async () => {
      const c = await person('client_elevated', { clientId: globex.id });
      await makeBillingRecipient(app.db.sql, globex.id, c);
      return tokenFor(c);
    },
    acme: 'document_forbidden',
    shop: 'document_forbidden',
    globex: 200,
  },
  {
    who: 'ordinary client user of Acme with a password, billing contact, token',
    auth: async () => {
      const c = await person('client', { clientId: acme.id });
      await makeBillingRecipient(app.db.sql, acme.id, c);
      return tokenFor(c);
    },
    ...ACME_ONLY,
  },
  {
    who: 'ordinary client user of Acme without a password (made from email), billing contact, token',
    auth: async () => {
      const c = await person('client', { clientId: acme.id });
      await makeBillingRecipient(app.db.sql, acme.id, c);
      await app.db.sql`update identities set password_hash = null where id = ${c.id}`;
      return tokenFor(c);
    },
    ...NONE,
  },
  {
    who: 'elevated client user of Acme, not a billing contact, session',
    auth: async () => sessionFor(await person('client_elevated', { clientId: acme.id })),
    ...NONE,
  },
  { who: 'client user of Acme, not a billing contact, token', auth: async () => tokenFor(await person('client', { clientId: acme.id })), ...NONE },
  {
    who: "owner's token restricted to the shop project: its project document only",
    auth: () => tokenFor(owner, { projectIds: [shop.id] }),
    acme: 'combined_document_forbidden',
    shop: 200,
    globex: 'combined_document_forbidden',
  },
  {
    who: "owner's token restricted to the intranet project",
    auth: () => tokenFor(owner, { projectIds: [intranet.id] }),
    acme: 'combined_document_forbidden',
    shop: 'document_forbidden',
    globex: 'combined_document_forbidden',
  },
  {
    who: "a granted member's token restricted to the shop project: the grant does not open combined documents",
    auth: async () => {
      const m = await person('member');
      await makeDocumentGrant(app.db.sql, ws, acme.id, m);
      return tokenFor(m, { projectIds: [shop.id] });
    },
    acme: 'combined_document_forbidden',
    shop: 200,
    globex: 'combined_document_forbidden',
  },
  {
    who: 'a restricted token of a member without any rule: nothing',
    auth: async () => tokenFor(await person('member'), { projectIds: [shop.id] }),
    ...NONE,
  },
];

describe('the download rule, per role and credential', () => {
  it.each(matrix.map((r) => [r.who, r] as const))('%s', async (_who, row) => {
    const auth = await row.auth();
    for (const key of ['acme', 'shop', 'globex'] as const) {
      const doc = key === 'acme' ? D.acmeHtml : D[key];
      const res = await download(doc.id, auth);
      const want = row[key];
      if (want === 200) {
        expect(res.status, `${key}: ${res.bytes.toString('utf8').slice(0, 200)}`).toBe(200);
        expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
      } else {
        expect(res.status, key).toBe(403);
        expect(res.json.error, key).toMatchObject({ code: 'forbidden', details: { reason: want } });
        // a refusal names nothing of the document
        expect(res.bytes.toString('utf8'), key).not.toContain(doc.number);
      }
    }
  });

  it('a token without the read scope is 403 missing_scope; no credential is 401', async () => {
    const res = await download(D.acmeHtml.id, await tokenFor(owner, { scopes: ['write'] }));
    expect(res.status).toBe(403);
    expect(res.json.error).toMatchObject({ code: 'forbidden', details: { reason: 'missing_scope', scope: 'read' } });
    expect((await download(D.acmeHtml.id, null)).status).toBe(401);
  });
});

describe('the document itself', () => {
  it('an unknown id is 404 unknown_document (also one of another workspace); a malformed one 400 bad_uuid', async () => {
    const auth = { token: ownerToken };
    const unknown = await download(randomUUID(), auth);
    expect(unknown.status).toBe(404);
    expect(unknown.json.error).toMatchObject({ code: 'not_found', details: { reason: 'unknown_document' } });

    const other = await makeWorkspace(app.db.sql);
    const otherClient = await makeClient(app.db.sql, other);
    const otherPeriod = await makePeriod(app.db.sql, other, { start: '2025-01-01', end: '2025-01-31', closed: true });
    const otherRun = await makeBillingRun(app.db.sql, other, { periodId: otherPeriod.id });
    const foreign = await makeDocument(app.db.sql, other, { runId: otherRun.id, clientId: otherClient.id });
    expect((await download(foreign.id, auth)).json.error).toMatchObject({ code: 'not_found', details: { reason: 'unknown_document' } });

    const bad = await download('not-a-uuid', auth);
    expect(bad.status).toBe(400);
    expect(bad.json.error).toMatchObject({ code: 'invalid', details: { reason: 'bad_uuid', field: 'id' } });
  });

  it('a voided document is 409 document_voided, but only for a caller who may download it', async () => {
    const voided = await makeDocument(app.db.sql, ws, { runId: await freshRun(), clientId: acme.id, number: 'ACME-2025-0003', voided: true });
    const res = await download(voided.id, { token: ownerToken });
    expect(res.status).toBe(409);
    expect(res.json.error).toMatchObject({ code: 'conflict', details: { reason: 'document_voided' } });
    const outsider = await download(voided.id, await tokenFor(await person('member')));
    expect(outsider.status).toBe(403);
    expect(outsider.json.error.details.reason).toBe('no_document_access');
  });

  it('a redacted document is 409 document_redacted naming the current version of the same format, along the whole chain', async () => {
    const sql = app.db.sql;
    const number = 'ACME-2025-0004';
    const runId = await freshRun();
    const v1 = await makeDocument(sql, ws, { runId, clientId: acme.id, number, format: 'csv', redacted: true });
    const v2 = await makeDocument(sql, ws, { runId, clientId: acme.id, number, format: 'csv', version: 2, redacted: true });
    const v3 = await makeDocument(sql, ws, { runId, clientId: acme.id, number, format: 'csv', version: 3 });
    const v3html = await makeDocument(sql, ws, { runId, clientId: acme.id, number, version: 3 });
    await sql`
      update timesheets s set supersedes_id = prev.id
      from timesheets prev
      where s.workspace_id = ${ws.id} and prev.workspace_id = ${ws.id} and s.number = ${number} and prev.number = ${number} and prev.version = s.version - 1`;
    for (const old of [v1, v2]) {
      const res = await download(old.id, { token: ownerToken });
      expect(res.status).toBe(409);
      expect(res.json.error).toMatchObject({ code: 'conflict', details: { reason: 'document_redacted', currentId: v3.id } });
      expect(res.json.error.details.currentId).not.toBe(v3html.id);
    }
    expect((await download(v3.id, { token: ownerToken })).status).toBe(200);
  });

  it('a redacted document whose new version is not rendered yet is 409 without currentId', async () => {
    const sql = app.db.sql;
    const v1 = await makeDocument(sql, ws, { runId: await freshRun(), clientId: acme.id, number: 'ACME-2025-0005', redacted: true });
    await sql`
      insert into timesheets (workspace_id, run_id, client_id, project_id, scope, number, version, formats, supersedes_id)
      select workspace_id, run_id, client_id, project_id, scope, number, version + 1, formats, id from timesheets
      where id = (select timesheet_id from documents where id = ${v1.id})`;
    const res = await download(v1.id, { token: ownerToken });
    expect(res.status).toBe(409);
    expect(res.json.error.details).toEqual({ reason: 'document_redacted' });
  });

  it('a document whose file is not stored is 404 file_unavailable', async () => {
    const doc = await makeDocument(app.db.sql, ws, { runId: await freshRun(), clientId: acme.id, number: 'ACME-2025-0006' });
    await setContent(doc.id, null);
    const res = await download(doc.id, { token: ownerToken });
    expect(res.status).toBe(404);
    expect(res.json.error).toMatchObject({ code: 'not_found', details: { reason: 'file_unavailable' } });
  });
});

describe('the contract headers and the stored bytes', () => {
  const SAFE = {
    'cache-control': 'private, no-store',
    'x-content-type-options': 'nosniff',
    'content-security-policy': "default-src 'none'; style-src 'unsafe-inline'; sandbox",
  };
  const headersOf = (res: Fetched) => Object.fromEntries(['content-type', 'content-disposition', ...Object.keys(SAFE)].map((h) => [h, res.headers.get(h)]));

  it('html: shown inline', async () => {
    const res = await download(D.acmeHtml.id, { token: ownerToken });
    expect(res.status).toBe(200);
    expect(headersOf(res)).toEqual({ 'content-type': 'text/html; charset=utf-8', 'content-disposition': 'inline', ...SAFE });
    expect(res.bytes.equals(HTML)).toBe(true);
  });

  it('csv: an attachment named <number>.csv', async () => {
    const res = await download(D.acmeCsv.id, { token: ownerToken });
    expect(res.status).toBe(200);
    expect(headersOf(res)).toEqual({ 'content-type': 'text/csv; charset=utf-8', 'content-disposition': 'attachment; filename="ACME-2025-0001.csv"', ...SAFE });
    expect(res.bytes.equals(CSV)).toBe(true);
  });

  it('pdf: an attachment named <number>.pdf, byte for byte', async () => {
    const res = await download(D.acmePdf.id, { token: ownerToken });
    expect(res.status).toBe(200);
    expect(headersOf(res)).toEqual({ 'content-type': 'application/pdf', 'content-disposition': 'attachment; filename="ACME-2025-0001.pdf"', ...SAFE });
    expect(res.bytes.equals(PDF)).toBe(true);
    expect(Number(res.headers.get('content-length'))).toBe(PDF.length);
  });
});

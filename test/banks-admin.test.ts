import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { login, startTestApp, type SessionCookie, type TestApp } from './helpers/app.ts';
import {
  makeBank,
  makeClient,
  makePeriod,
  makeProject,
  makeTicket,
  makeTimeEntry,
  makeToken,
  makeUser,
  makeWorkspace,
  type Person,
  type Workspace,
} from './helpers/factories.ts';

/**
 * The Owner/Admin bank endpoints (browser session): GET/POST /billing/banks, GET /clients/{id}/banks,
 * POST /billing/banks/{id}/deposits; balances fed by billed runs; a bank policy on a ticket.
 */

let app: TestApp;
let ws: Workspace;
let owner: Person;
let session: SessionCookie;
let acme: { id: string };
let globex: { id: string };
let prepaid: { id: string };

const W = () => `/api/w/${ws.slug}`;
const createBank = (body: unknown, auth: { session?: SessionCookie; token?: string } = { session }) =>
  app.call('POST', `${W()}/billing/banks`, { ...auth, body });
const deposit = (bankId: string, body: unknown, auth: { session?: SessionCookie; token?: string } = { session }) =>
  app.call('POST', `${W()}/billing/banks/${bankId}/deposits`, { ...auth, body });
const clientBanks = (clientId: string, auth: { session?: SessionCookie; token?: string } = { session }) =>
  app.call('GET', `${W()}/clients/${clientId}/banks`, auth);
const allBanks = (auth: { session?: SessionCookie; token?: string } = { session }) => app.call('GET', `${W()}/billing/banks`, auth);
const balanceOf = async (bankId: string) => (await allBanks()).body.banks.find((b: { id: string }) => b.id === bankId);

beforeAll(async () => {
  app = await startTestApp();
  const sql = app.db.sql;
  ws = await makeWorkspace(sql);
  owner = await makeUser(sql, ws, { role: 'owner' });
  session = await login(app, owner.email, owner.password);
  acme = await makeClient(sql, ws, { name: 'Acme' });
  globex = await makeClient(sql, ws, { name: 'Globex' });
});
afterAll(() => app.close());

describe('POST /billing/banks', () => {
  it('creates an empty bank of a client: 201 with its balance', async () => {
    const res = await createBank({ clientId: acme.id, name: '  Prepaid 2025 ' });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      id: expect.any(String),
      name: 'Prepaid 2025',
      clientId: acme.id,
      clientName: 'Acme',
      depositedMinutes: 0,
      consumedMinutes: 0,
      remainingMinutes: 0,
    });
    prepaid = { id: res.body.id };
    const [row] = await app.db.sql<{ createdBy: string }[]>`select created_by as "createdBy" from banks where id = ${prepaid.id}`;
    expect(row!.createdBy).toBe(owner.id);
  });

  it('a name the client already uses, in any case, is 409 bank_exists; another client may use it', async () => {
    const dup = await createBank({ clientId: acme.id, name: 'PREPAID 2025' });
    expect(dup.status).toBe(409);
    expect(dup.body.error).toMatchObject({ code: 'conflict', details: { reason: 'bank_exists', field: 'name' } });
    expect((await createBank({ clientId: globex.id, name: 'Prepaid 2025' })).status).toBe(201);
  });

  it('an unknown client, or one of another workspace, is 404 unknown_client', async () => {
    const other = await makeClient(app.db.sql, await makeWorkspace(app.db.sql));
    for (const clientId of [randomUUID(), other.id]) {
      const res = await createBank({ clientId, name: 'Retainer' });
      expect(res.status).toBe(404);
      expect(res.body.error).toMatchObject({ code: 'not_found', details: { reason: 'unknown_client' } });
    }
  });

  it.each([
    ['a blank name', { name: '   ' }, 'name'],
    ['a name over 200 characters', { name: 'x'.repeat(201) }, 'name'],
    ['no name', { name: undefined }, 'name'],
    ['a client that is not a UUID', { clientId: 'acme' }, 'clientId'],
  ])('%s is 400 validation', async (_what, patch, field) => {
    const res = await createBank({ clientId: acme.id, name: 'Valid', ...patch });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ code: 'invalid', details: { reason: 'validation', field } });
  });
});

describe('POST /billing/banks/{id}/deposits', () => {
  it('tops a bank up: 201 with the deposit and the new balance; a negative deposit corrects', async () => {
    const res = await deposit(prepaid.id, { minutes: 600, depositedOn: '2025-01-02', note: ' PO 4711 ' });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      deposit: {
        id: expect.any(String),
        bankId: prepaid.id,
        minutes: 600,
        depositedOn: '2025-01-02',
        note: 'PO 4711',
        createdBy: owner.id,
        createdAt: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/),
      },
      bank: expect.objectContaining({ id: prepaid.id, depositedMinutes: 600, consumedMinutes: 0, remainingMinutes: 600 }),
    });
    const fix = await deposit(prepaid.id, { minutes: -60, depositedOn: '2025-01-03' });
    expect(fix.status).toBe(201);
    expect(fix.body.deposit.note).toBeNull();
    expect(fix.body.bank).toMatchObject({ depositedMinutes: 540, remainingMinutes: 540 });
  });

  it.each([
    ['zero minutes', { minutes: 0 }, 'minutes'],
    ['fractional minutes', { minutes: 1.5 }, 'minutes'],
    ['more than the column holds', { minutes: 10_000_001 }, 'minutes'],
    ['less than the column holds', { minutes: -10_000_001 }, 'minutes'],
    ['minutes as a string', { minutes: '60' }, 'minutes'],
    ['an impossible date', { depositedOn: '2025-02-30' }, 'depositedOn'],
    ['no date', { depositedOn: undefined }, 'depositedOn'],
    ['a note over 500 characters', { note: 'x'.repeat(501) }, 'note'],
  ])('%s is 400 validation, and nothing is deposited', async (_what, patch, field) => {
    const res = await deposit(prepaid.id, { minutes: 60, depositedOn: '2025-01-05', ...patch });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ code: 'invalid', details: { reason: 'validation', field } });
    expect((await balanceOf(prepaid.id)).depositedMinutes).toBe(540);
  });

  it('the bounds themselves are accepted', async () => {
    const bank = await makeBank(app.db.sql, ws, { clientId: globex.id });
    expect((await deposit(bank.id, { minutes: 10_000_000, depositedOn: '2025-01-05' })).status).toBe(201);
    expect((await deposit(bank.id, { minutes: -10_000_000, depositedOn: '2025-01-05', note: 'x'.repeat(500) })).body.bank.depositedMinutes).toBe(0);
  });

  it('an unknown bank, or one of another workspace, is 404 unknown_bank; a malformed id 400 bad_uuid', async () => {
    const otherWs = await makeWorkspace(app.db.sql);
    const foreign = await makeBank(app.db.sql, otherWs, { clientId: (await makeClient(app.db.sql, otherWs)).id });
    for (const id of [randomUUID(), foreign.id]) {
      const res = await deposit(id, { minutes: 60, depositedOn: '2025-01-05' });
      expect(res.status).toBe(404);
      expect(res.body.error).toMatchObject({ code: 'not_found', details: { reason: 'unknown_bank' } });
    }
    const bad = await deposit('prepaid', { minutes: 60, depositedOn: '2025-01-05' });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toMatchObject({ code: 'invalid', details: { reason: 'bad_uuid', field: 'id' } });
  });
});

describe('GET /billing/banks and GET /clients/{id}/banks', () => {
  it('every bank, by client then name; a client’s own', async () => {
    const all = await allBanks();
    expect(all.status).toBe(200);
    expect(all.body.banks.map((b: { clientName: string; name: string }) => `${b.clientName}/${b.name}`)).toEqual([
      'Acme/Prepaid 2025',
      expect.stringMatching(/^Globex\/Bank /),
      'Globex/Prepaid 2025',
    ]);
    const mine = await clientBanks(acme.id);
    expect(mine.status).toBe(200);
    expect(mine.body).toEqual({
      banks: [
        { id: prepaid.id, name: 'Prepaid 2025', clientId: acme.id, clientName: 'Acme', depositedMinutes: 540, consumedMinutes: 0, remainingMinutes: 540 },
      ],
    });
  });

  it('a client without banks: an empty list; an unknown client 404 unknown_client; a malformed id 400', async () => {
    const initech = await makeClient(app.db.sql, ws, { name: 'Initech' });
    expect((await clientBanks(initech.id)).body).toEqual({ banks: [] });
    const unknown = await clientBanks(randomUUID());
    expect(unknown.status).toBe(404);
    expect(unknown.body.error).toMatchObject({ code: 'not_found', details: { reason: 'unknown_client' } });
    expect((await clientBanks('acme')).body.error).toMatchObject({ code: 'invalid', details: { reason: 'bad_uuid', field: 'id' } });
  });
});

describe('balances follow billed runs', () => {
  it('billed bank entries draw the bank down; unbilled ones do not; a voided run returns its draw-downs', async () => {
    const sql = app.db.sql;
    const shop = await makeProject(sql, ws, { billingClientId: acme.id });
    await sql`update projects set billing_policy = ${`bank:${prepaid.id}`} where id = ${shop.id}`;
    await makePeriod(sql, ws, { start: '2025-01-01', end: '2025-01-31' });
    const worker = await makeUser(sql, ws);
    const ticket = await makeTicket(sql, ws, { projectId: shop.id });
    const log = (minutes: number, billed: boolean) =>
      makeTimeEntry(sql, ws, { ticketId: ticket.id, userId: worker.id, spentOn: '2025-01-10', minutes, billed });
    const first = await log(90, true);
    await log(30, true);
    await log(45, false);
    expect(await balanceOf(prepaid.id)).toMatchObject({ depositedMinutes: 540, consumedMinutes: 120, remainingMinutes: 420 });

    // billed is billed: a policy changed after the run does not rewrite what the run drew
    await sql`update tickets set billing_policy = 'paid' where id = ${ticket.id}`;
    expect(await balanceOf(prepaid.id)).toMatchObject({ consumedMinutes: 120 });

    // voiding the run that billed the first entry (its lines stop being live) gives its 90 minutes back
    const [entry] = await sql<{ runId: string }[]>`select billing_run_id as "runId" from time_entries where id = ${first.id}`;
    const runId = entry!.runId;
    await sql`update billing_run_entries set active = false where run_id = ${runId}`;
    await sql`update time_entries set billed = false, billing_run_id = null where billing_run_id = ${runId}`;
    expect(await balanceOf(prepaid.id)).toMatchObject({ depositedMinutes: 540, consumedMinutes: 30, remainingMinutes: 510 });
    expect((await clientBanks(acme.id)).body.banks[0]).toMatchObject({ consumedMinutes: 30 });
  });
});

describe('a bank policy on a ticket (PATCH /tickets/{ref})', () => {
  let project: { id: string; key: string };
  let globexBank: { id: string };
  let ticket: { id: string; humanId: string };
  const patch = (body: unknown) => app.call('PATCH', `${W()}/tickets/${ticket.humanId}`, { session, body });

  beforeAll(async () => {
    const sql = app.db.sql;
    project = await makeProject(sql, ws, { billingClientId: acme.id, collaboratorIds: [globex.id] });
    globexBank = await makeBank(sql, ws, { clientId: globex.id, name: 'Globex retainer' });
    ticket = await makeTicket(sql, ws, { projectId: project.id });
  });

  it("a bank of the ticket's billing client is stored", async () => {
    const res = await patch({ billingPolicy: `bank:${prepaid.id}` });
    expect(res.status).toBe(200);
    const [row] = await app.db.sql<{ bankId: string }[]>`select billing_bank_id as "bankId" from tickets where id = ${ticket.id}`;
    expect(row!.bankId).toBe(prepaid.id);
  });

  it('an unknown bank, or one of another workspace, is 400 unknown_bank, not a database error', async () => {
    const otherWs = await makeWorkspace(app.db.sql);
    const foreign = await makeBank(app.db.sql, otherWs, { clientId: (await makeClient(app.db.sql, otherWs)).id });
    for (const bankId of [randomUUID(), foreign.id]) {
      const res = await patch({ billingPolicy: `bank:${bankId}` });
      expect(res.status).toBe(400);
      expect(res.body.error).toMatchObject({ code: 'invalid', details: { reason: 'unknown_bank', field: 'billingPolicy' } });
    }
    const [row] = await app.db.sql<{ policy: string }[]>`select billing_policy as policy from tickets where id = ${ticket.id}`;
    expect(row!.policy).toBe(`bank:${prepaid.id}`);
  });

  it("a bank of another client than the ticket's billing client is 400 bank_client_mismatch, unless the same PATCH moves the ticket to that client", async () => {
    const res = await patch({ billingPolicy: `bank:${globexBank.id}` });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ code: 'invalid', details: { reason: 'bank_client_mismatch', field: 'billingPolicy' } });
    const both = await patch({ billingClientId: globex.id, billingPolicy: `bank:${globexBank.id}` });
    expect(both.status).toBe(200);
    expect(both.body.billingClient).toMatchObject({ id: globex.id });
  });

  it('internal work (no billing client) may name any bank of the workspace; paid and free need no bank', async () => {
    expect((await patch({ billingClientId: null, billingPolicy: `bank:${prepaid.id}` })).status).toBe(200);
    expect((await patch({ billingPolicy: 'free' })).status).toBe(200);
    expect((await patch({ billingPolicy: null })).status).toBe(200);
  });
});

describe('refusals', () => {
  type Auth = { session?: SessionCookie; token?: string };
  const routes: ((auth: Auth) => ReturnType<typeof allBanks>)[] = [
    (auth) => allBanks(auth),
    (auth) => createBank({ clientId: acme.id, name: `Probe ${randomUUID()}` }, auth),
    (auth) => deposit(prepaid.id, { minutes: 60, depositedOn: '2025-01-05' }, auth),
    (auth) => clientBanks(acme.id, auth),
  ];

  it('a token is 403 session_required on every bank route, even the owner’s', async () => {
    const token = (await makeToken(app.db.sql, ws, owner)).token;
    for (const route of routes) {
      const res = await route({ token });
      expect(res.status).toBe(403);
      expect(res.body.error).toMatchObject({ code: 'forbidden', details: { reason: 'session_required' } });
    }
  });

  it('a member session is 403 admin_only; an admin session may', async () => {
    const member = await makeUser(app.db.sql, ws, { role: 'member' });
    const memberSession = await login(app, member.email, member.password);
    for (const route of routes) {
      const res = await route({ session: memberSession });
      expect(res.status).toBe(403);
      expect(res.body.error).toMatchObject({ code: 'forbidden', details: { reason: 'admin_only' } });
    }
    const admin = await makeUser(app.db.sql, ws, { role: 'admin' });
    const adminSession = await login(app, admin.email, admin.password);
    expect((await allBanks({ session: adminSession })).status).toBe(200);
    expect((await deposit(prepaid.id, { minutes: 15, depositedOn: '2025-01-06' }, { session: adminSession })).status).toBe(201);
  });
});

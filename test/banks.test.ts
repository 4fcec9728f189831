import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './helpers/app.ts';
import {
  makeBank,
  makeBillingRecipient,
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
import { mcpSession } from './helpers/mcp.ts';

/**
 * Time banks have no token-enabled REST endpoint (the contract): token holders read balances
 * through the MCP tool get_bank_balances, so the rules are tested over MCP.
 */

let app: TestApp;
let ws: Workspace;
let owner: Person;
let acme: { id: string; code: string };
let globex: { id: string; code: string };
let shop: { id: string; key: string };
let blog: { id: string; key: string };
let intranet: { id: string; key: string };
let prepaid: { id: string };
let support: { id: string };
let globexBank: { id: string };

async function balances(person: Person, args: Record<string, unknown> = {}, opts: Parameters<typeof makeToken>[3] = {}) {
  const s = await mcpSession(app, (await makeToken(app.db.sql, ws, person, opts)).token);
  const out = await s.ok('get_bank_balances', args);
  await s.close();
  return out.banks as { id: string; name: string; clientName: string; depositedMinutes: number; consumedMinutes: number; remainingMinutes: number }[];
}

beforeAll(async () => {
  app = await startTestApp();
  const sql = app.db.sql;
  ws = await makeWorkspace(sql);
  owner = await makeUser(sql, ws, { role: 'owner' });
  acme = await makeClient(sql, ws, { name: 'Acme' });
  globex = await makeClient(sql, ws, { name: 'Globex' });
  shop = await makeProject(sql, ws, { billingClientId: acme.id });
  blog = await makeProject(sql, ws, { billingClientId: acme.id });
  intranet = await makeProject(sql, ws, { billingClientId: globex.id });
  prepaid = await makeBank(sql, ws, { clientId: acme.id, name: 'Prepaid 2025', deposits: [600, 300, -60] });
  support = await makeBank(sql, ws, { clientId: acme.id, name: 'Support', deposits: [120] });
  globexBank = await makeBank(sql, ws, { clientId: globex.id, name: 'Retainer', deposits: [60] });

  // policies: the shop project draws on "Prepaid 2025"; one blog ticket does too, on its own;
  // Globex as a client draws on its retainer; one shop ticket opts out to "paid"
  await sql`update projects set billing_policy = ${`bank:${prepaid.id}`} where id = ${shop.id}`;
  await sql`update clients set billing_policy = ${`bank:${globexBank.id}`} where id = ${globex.id}`;
  await makePeriod(sql, ws, { start: '2025-01-01', end: '2025-01-31' });
  const worker = await makeUser(sql, ws);
  const entry = (ticketId: string, minutes: number, billed: boolean) =>
    makeTimeEntry(sql, ws, { ticketId, userId: worker.id, spentOn: '2025-01-10', minutes, billed });
  const shopTicket = await makeTicket(sql, ws, { projectId: shop.id });
  await entry(shopTicket.id, 100, true);
  await entry(shopTicket.id, 50, false); // not billed yet: not consumed
  const paidTicket = await makeTicket(sql, ws, { projectId: shop.id });
  await sql`update tickets set billing_policy = 'paid' where id = ${paidTicket.id}`;
  await entry(paidTicket.id, 500, true);
  const blogTicket = await makeTicket(sql, ws, { projectId: blog.id });
  await sql`update tickets set billing_policy = ${`BANK:${prepaid.id.toUpperCase()}`} where id = ${blogTicket.id}`;
  await entry(blogTicket.id, 20, true);
  const intranetTicket = await makeTicket(sql, ws, { projectId: intranet.id });
  await entry(intranetTicket.id, 90, true);
});
afterAll(() => app.close());

describe('get_bank_balances', () => {
  // Every policy above is set before its entries are billed, so each run line recorded the bank the
  // ticket drew on then: consumption is the live run lines per bank (see test/banks-admin.test.ts
  // for a policy changed after billing, and a voided run giving its minutes back).
  it('owner: every bank; deposits minus the minutes billed against it by live runs', async () => {
    expect(await balances(owner)).toEqual([
      { id: prepaid.id, name: 'Prepaid 2025', clientId: acme.id, clientName: 'Acme', depositedMinutes: 840, consumedMinutes: 120, remainingMinutes: 720 },
      { id: support.id, name: 'Support', clientId: acme.id, clientName: 'Acme', depositedMinutes: 120, consumedMinutes: 0, remainingMinutes: 120 },
      { id: globexBank.id, name: 'Retainer', clientId: globex.id, clientName: 'Globex', depositedMinutes: 60, consumedMinutes: 90, remainingMinutes: -30 },
    ]);
    const admin = await makeUser(app.db.sql, ws, { role: 'admin' });
    expect(await balances(admin)).toHaveLength(3);
  });

  it("a project manager: the banks of their projects' clients; other members: none", async () => {
    const pm = await makeUser(app.db.sql, ws);
    await app.db
      .sql`insert into project_memberships (workspace_id, project_id, identity_id, access, is_manager) values (${ws.id}, ${intranet.id}, ${pm.id}, 'full', true)`;
    expect((await balances(pm)).map((b) => b.name)).toEqual(['Retainer']);
    const collaborator = await makeUser(app.db.sql, ws);
    // managing a project whose billing client is Globex and collaborating client Acme: both clients' banks
    await makeProject(app.db.sql, ws, { billingClientId: globex.id, collaboratorIds: [acme.id], members: [{ person: collaborator, isManager: true }] });
    expect((await balances(collaborator)).map((b) => b.name)).toEqual(['Prepaid 2025', 'Support', 'Retainer']);
    const plain = await makeUser(app.db.sql, ws);
    await app.db
      .sql`insert into project_memberships (workspace_id, project_id, identity_id, access, is_manager) values (${ws.id}, ${shop.id}, ${plain.id}, 'full', false)`;
    expect(await balances(plain)).toEqual([]);
  });

  it("a client billing contact with a full login: their client's banks; any other client user: none", async () => {
    const contact = await makeUser(app.db.sql, ws, { role: 'client', clientId: acme.id });
    await makeBillingRecipient(app.db.sql, acme.id, contact);
    expect((await balances(contact)).map((b) => b.name)).toEqual(['Prepaid 2025', 'Support']);
    const elevated = await makeUser(app.db.sql, ws, { role: 'client_elevated', clientId: globex.id });
    expect(await balances(elevated)).toEqual([]);
    const noLogin = await makeUser(app.db.sql, ws, { role: 'client', clientId: acme.id });
    await makeBillingRecipient(app.db.sql, acme.id, noLogin);
    await app.db.sql`update identities set password_hash = null where id = ${noLogin.id}`;
    expect(await balances(noLogin)).toEqual([]);
  });

  it('a token restricted to projects: the clients of those projects only', async () => {
    expect((await balances(owner, {}, { projectIds: [intranet.id] })).map((b) => b.name)).toEqual(['Retainer']);
  });

  it('filters by client id, code or name; an unknown client lists the choices', async () => {
    expect((await balances(owner, { client: globex.code })).map((b) => b.name)).toEqual(['Retainer']);
    expect((await balances(owner, { client: 'acme' })).map((b) => b.name)).toEqual(['Prepaid 2025', 'Support']);
    expect((await balances(owner, { client: acme.id })).map((b) => b.name)).toEqual(['Prepaid 2025', 'Support']);
    const s = await mcpSession(app, (await makeToken(app.db.sql, ws, owner)).token);
    const e = await s.fail('get_bank_balances', { client: 'Initech' });
    expect(e).toMatchObject({ code: 'invalid', reason: 'unknown_client', details: { field: 'client' } });
    expect(e.details.choices.map((c: any) => c.name)).toEqual(['Acme', 'Globex']);
    await s.close();
  });
});

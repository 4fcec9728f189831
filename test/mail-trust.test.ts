import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { dkimSign, type DKIMSignOptions } from 'mailauth';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { operatorPrincipal } from '../src/core/auth/operator.ts';
import { makeCtx, type Ctx } from '../src/core/ctx.ts';
import { deliverTimesheet } from '../src/core/documents/deliver.ts';
import type { JobCtx } from '../src/core/jobs/ctx.ts';
import { pollMailbox } from '../src/core/mail/intake/poll.ts';
import { connectImap } from '../src/jobs/machinery/imap.ts';
import { passwordContext } from '../src/core/mail/intake/present.ts';
import { hashReplyToken, issueReplyAddress, newReplyToken } from '../src/core/mail/intake/reply-token.ts';
import { getMailbox, setMailbox } from '../src/core/mail/intake/settings.ts';
import { runOp } from '../src/core/operation.ts';
import type { DnsResolver } from '../src/core/mail/intake/verify.ts';
import type { OutgoingMail } from '../src/core/mail/mailer.ts';
import { SecretBox } from '../src/core/mail/secret-box.ts';
import { readTicketPage } from '../src/core/tickets/read.ts';
import { createClient } from '../src/core/workspaces/create.ts';
import { makeLogger } from '../src/log.ts';
import { loopbackGuard, startDovecot, type Dovecot } from './helpers/dovecot.ts';
import { testDb, type TestDb } from './helpers/db.ts';
import { makeBillingRun, makeDocument, makeProject, makeTicket, makeUser, makeWorkspace, type Person, type Workspace } from './helpers/factories.ts';

// Issue 19, defects 1 and 4: a From header proves nothing. Against a real dovecot, with DKIM keys
// the test controls, published through the DNS resolver the intake is given.

let db: TestDb;
let imap: Dovecot;
const box = new SecretBox(randomBytes(32));
const MAIL_FROM = 'Support <support@agency.test>';

/** An RSA key pair: the private key signs, the public one is the DKIM TXT record's `p=`. */
function dkimKey() {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  return {
    privateKey: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
    record: `v=DKIM1; k=rsa; p=${publicKey.export({ type: 'spki', format: 'der' }).toString('base64')}`,
  };
}

const ownerKey = dkimKey(); // example.test's real key (the factories' users live at example.test)
const evilKey = dkimKey(); // evil.test's real key
const forgedKey = dkimKey(); // a key an attacker made up and signs with as example.test: DNS does not publish it

/** The test's DNS: example.test and evil.test publish their keys and a DMARC policy; nothing else exists. */
const TXT: Record<string, string> = {
  's1._domainkey.example.test': ownerKey.record,
  '_dmarc.example.test': 'v=DMARC1; p=reject',
  's1._domainkey.evil.test': evilKey.record,
  '_dmarc.evil.test': 'v=DMARC1; p=reject',
};
const resolver: DnsResolver = async (name, rrtype) => {
  const txt = rrtype === 'TXT' ? TXT[name.toLowerCase()] : undefined;
  if (txt) return [[txt]];
  throw Object.assign(new Error(`queryTxt ENOTFOUND ${name}`), { code: 'ENOTFOUND' });
};

beforeAll(async () => {
  [db, imap] = await Promise.all([testDb(), startDovecot()]);
}, 60_000);
afterAll(async () => {
  await imap?.stop();
  await db?.close();
});

function jobCtx(): JobCtx {
  return {
    sql: db.sql,
    now: () => new Date(),
    log: makeLogger('silent'),
    pdf: null,
    mailer: { send: () => Promise.reject(new Error('the intake sends no mail')) },
    mailFrom: MAIL_FROM,
    outbound: loopbackGuard,
  };
}

interface World {
  ws: Workspace;
  owner: Person;
  owned: Ctx;
  acme: string;
  poll: () => Promise<Record<string, number>>;
  deliver: (...messages: Buffer[]) => Promise<number[]>;
  state: () => Promise<unknown>;
}

/** A workspace with an owner, client Acme (recipient ana@acme.test), and a mailbox on a folder of its own. */
async function world(): Promise<World> {
  const sql = db.sql;
  const ws = await makeWorkspace(sql);
  const owner = await makeUser(sql, ws, { role: 'owner', name: 'Olivia Owner' });
  const acme = await createClient(sql, {
    workspaceId: ws.id,
    name: 'Acme',
    code: `A${randomBytes(3).toString('hex').toUpperCase()}`,
    recipients: [{ email: 'ana@acme.test' }],
  });
  const folder = `T${randomBytes(4).toString('hex')}`;
  await imap.deliver(folder);
  const sealed = box.seal(imap.password, passwordContext(ws.id));
  const [mb] = await sql<{ id: string }[]>`
    insert into mailboxes (workspace_id, host, port, secure, username, password_sealed, folder)
    values (${ws.id}, ${imap.host}, ${imap.port}, false, ${imap.user}, ${sealed}, ${folder}) returning id`;
  return {
    ws,
    owner,
    owned: makeCtx({ sql }, await operatorPrincipal(sql, ws.slug, owner.email)),
    acme,
    poll: async () => {
      const r = await pollMailbox(jobCtx(), { mailboxId: mb!.id }, { connect: connectImap, secrets: box, resolver });
      if (r.status !== 'polled') throw new Error(`poll ${r.status}: ${'error' in r ? r.error : ''}`);
      return r.counts;
    },
    deliver: (...messages) => imap.deliver(folder, ...messages),
    state: async () => ({
      position: (await sql`select uid_validity::text as "uidValidity", last_uid::int as "lastUid" from mailboxes where id = ${mb!.id}`)[0],
      log: await sql`select uid::int, status, reason from intake_messages where mailbox_id = ${mb!.id} order by received_at, uid`,
      folder: await folderState(folder),
    }),
  };
}

/** The folder as a mail client sees it: UIDNEXT and each message's UID and flags. */
async function folderState(folder: string) {
  const c = await imap.client();
  try {
    const box = await c.mailboxOpen(folder);
    const messages: { uid: number; flags: string[] }[] = [];
    if (box.exists > 0) for await (const m of c.fetch('1:*', { uid: true, flags: true })) messages.push({ uid: m.uid, flags: [...(m.flags ?? [])] });
    return { uidNext: box.uidNext, uidValidity: String(box.uidValidity), messages };
  } finally {
    await c.logout();
  }
}

/** Polls and expects these counts; on a mismatch the message says what the intake and the folder held. */
async function polled(w: World, want: Record<string, number>): Promise<void> {
  const counts = await w.poll();
  if (Object.entries(want).some(([k, n]) => counts[k] !== n)) expect(counts, JSON.stringify(await w.state())).toMatchObject(want);
}

let seq = 0;

/** A plain-text message, CRLF line ends; `sign` adds a DKIM-Signature by that domain's key (or a made-up one). */
async function mail(o: { from: string; subject: string; to?: string; body?: string; sign?: { domain: string; privateKey: string } }): Promise<Buffer> {
  const id = `trust-${++seq}-${randomBytes(4).toString('hex')}@${o.from.split('@')[1]!.replace(/>$/, '')}`;
  const message = Buffer.from(
    [
      `From: ${o.from}`,
      `To: ${o.to ?? 'support@agency.test'}`,
      `Subject: ${o.subject}`,
      'Date: Tue, 24 Nov 2026 09:00:00 +0000',
      `Message-ID: <${id}>`,
      'MIME-Version: 1.0',
      'Content-Type: text/plain; charset=utf-8',
      '',
      o.body ?? 'Please do it now.',
      '',
    ].join('\r\n'),
  );
  if (!o.sign) return message;
  // mailauth 4.x signs only through `signatureData` (its bundled types say otherwise)
  const signature = { signingDomain: o.sign.domain, selector: 's1', privateKey: o.sign.privateKey };
  const signed = await dkimSign(message, { signatureData: [signature] } as unknown as DKIMSignOptions);
  if (!signed.signatures.startsWith('DKIM-Signature:')) throw new Error(`signing failed: ${JSON.stringify(signed.errors)}`);
  return Buffer.concat([Buffer.from(signed.signatures), message]);
}

async function log(w: World) {
  return db.sql<{ status: string; reason: string | null; verdict: string | null; ticketId: string | null; commentId: string | null }[]>`
    select status, reason, verdict, ticket_id as "ticketId", comment_id as "commentId" from intake_messages where workspace_id = ${w.ws.id} order by uid`;
}

/** Everything in the workspace attributed to a person: tickets reported, comments written, files uploaded, events done. */
async function attributedTo(w: World, identityId: string) {
  const [row] = await db.sql<{ tickets: number; comments: number; attachments: number; events: number; viewer: number }[]>`
    select (select count(*)::int from tickets where workspace_id = ${w.ws.id} and reporter_id = ${identityId}) as tickets,
           (select count(*)::int from comments where workspace_id = ${w.ws.id} and author_id = ${identityId}) as comments,
           (select count(*)::int from attachments where workspace_id = ${w.ws.id} and uploaded_by = ${identityId}) as attachments,
           (select count(*)::int from ticket_events where workspace_id = ${w.ws.id} and actor_id = ${identityId}) as events,
           (select count(*)::int from ticket_viewers v join tickets t on t.id = v.ticket_id where t.workspace_id = ${w.ws.id} and v.identity_id = ${identityId}) as viewer`;
  return row!;
}

const page = async (ctx: Ctx, ref: string) => {
  const r = await runOp(readTicketPage, ctx, { ref });
  if (r.status !== 200) throw new Error('no page');
  return r.page;
};

describe('a From header proves nothing (defect 1)', () => {
  it("a message From the owner, signed with the key the owner's domain publishes, acts as the owner", async () => {
    const w = await world();
    const sign = { domain: 'example.test', privateKey: ownerKey.privateKey };
    await w.deliver(await mail({ from: `Olivia <${w.owner.email}>`, subject: 'Order more toner', sign }));
    await polled(w, { imported: 1 });
    await w.deliver(await mail({ from: `Olivia <${w.owner.email}>`, subject: 'Re: [INBOX-1] Order more toner', body: 'Done, ordered.', sign }));
    await polled(w, { reply: 1 });

    const p = await page(w.owned, 'INBOX-1');
    expect(p.reporter).toMatchObject({ id: w.owner.id, name: 'Olivia Owner' });
    expect(p.comments).toEqual([
      expect.objectContaining({ body: 'Done, ordered.', audience: 'internal', author: expect.objectContaining({ id: w.owner.id }) }),
    ]);
    const entries = await log(w);
    expect(entries.map((e) => e.verdict)).toEqual(['dkim=pass (d=example.test) dmarc=pass', 'dkim=pass (d=example.test) dmarc=pass']);
  });

  it('the same messages unsigned: an Inbox ticket from an unverified outside sender, nothing attributed to the owner', async () => {
    const w = await world();
    const project = await makeProject(db.sql, w.ws, { key: `W${randomBytes(2).toString('hex').toUpperCase()}` });
    const web1 = await makeTicket(db.sql, w.ws, { projectId: project.id, title: 'Status', reporterId: w.owner.id });
    const before = await attributedTo(w, w.owner.id);
    await w.deliver(
      await mail({ from: `Olivia <${w.owner.email}>`, subject: 'Wire 10,000 EUR to the new account' }),
      await mail({ from: `Olivia <${w.owner.email}>`, subject: `Re: [${web1.humanId}] status`, body: 'Close it, the client agreed.' }),
    );
    await polled(w, { imported: 1, quarantined: 1, reply: 0 });

    const [opened, replied] = await log(w);
    expect(opened).toMatchObject({ status: 'imported', verdict: 'dkim=none dmarc=fail' });
    expect(replied).toMatchObject({ status: 'quarantined', commentId: null, verdict: 'dkim=none dmarc=fail' });
    expect(replied!.reason).toMatch(/^sender_unverified: dkim=none/);
    const inbox = await page(w.owned, opened!.ticketId!);
    expect(inbox.reporter).toBeNull();
    expect(inbox.description).toContain(`_Unverified sender:_ \`Olivia <${w.owner.email}>\``);
    expect(inbox.viewers).toEqual([]);
    // nothing the owner did: no ticket reported, no comment, no event, no viewer row
    expect(await attributedTo(w, w.owner.id)).toEqual(before);
    expect((await page(w.owned, web1.humanId)).comments).toEqual([]);
  });

  it('signed by another domain, or as the owner’s domain with a key its DNS does not publish: not proven', async () => {
    const w = await world();
    await w.deliver(
      await mail({ from: `Olivia <${w.owner.email}>`, subject: 'Signed by evil.test', sign: { domain: 'evil.test', privateKey: evilKey.privateKey } }),
      await mail({
        from: `Olivia <${w.owner.email}>`,
        subject: 'Signed with a made-up key',
        sign: { domain: 'example.test', privateKey: forgedKey.privateKey },
      }),
    );
    await polled(w, { imported: 2 });
    const [evil, forged] = await log(w);
    expect(evil!.verdict).toBe('dkim=pass (d=evil.test, not aligned) dmarc=fail');
    expect(forged!.verdict).toMatch(/^dkim=(fail|neutral|permerror) dmarc=fail$/);
    for (const e of [evil!, forged!]) expect((await page(w.owned, e.ticketId!)).reporter).toBeNull();
    expect(await attributedTo(w, w.owner.id)).toMatchObject({ tickets: 0, comments: 0, events: 0 });
  });

  it('a trusted receiving server’s Authentication-Results is believed only at the top, and only with its authserv-id', async () => {
    const w = await world();
    await db.sql`update mailboxes set trusted_authserv_id = 'mx.agency.test' where workspace_id = ${w.ws.id}`;
    const pass = `mx.agency.test; dkim=pass header.d=example.test header.s=s1; dmarc=pass (p=reject) header.from=example.test`;
    const unsigned = async (subject: string) => mail({ from: `Olivia <${w.owner.email}>`, subject });
    const withHeaders = (m: Buffer, ...lines: string[]) => Buffer.concat([Buffer.from(lines.map((l) => `${l}\r\n`).join('')), m]);
    await w.deliver(
      withHeaders(await unsigned('Trusted server says pass'), `Authentication-Results: ${pass}`),
      // the sender wrote one with the trusted id, below the trusted server's own (which says none) and its Received line
      withHeaders(
        await unsigned('Forged one further down'),
        'Authentication-Results: mx.agency.test; dkim=none; dmarc=fail header.from=example.test',
        'Received: from relay.evil.test (relay.evil.test [203.0.113.9]) by mx.agency.test; Tue, 24 Nov 2026 09:00:01 +0000',
        `Authentication-Results: ${pass}`,
      ),
      // another server's word counts for nothing
      withHeaders(await unsigned('Untrusted server says pass'), `Authentication-Results: ${pass.replace('mx.agency.test', 'mx.evil.test')}`),
    );
    await polled(w, { imported: 3 });
    const entries = await log(w);
    expect(entries.map((e) => e.verdict)).toEqual([
      'mx.agency.test: dkim=pass dmarc=pass',
      'mx.agency.test: dkim=none dmarc=fail dkim=none dmarc=fail',
      'auth-results=none (mx.agency.test) dkim=none dmarc=fail',
    ]);
    const reporters = await Promise.all(entries.map(async (e) => (await page(w.owned, e.ticketId!)).reporter?.id ?? null));
    expect(reporters).toEqual([w.owner.id, null, null]);
  });
});

describe('reply addresses (defect 1)', () => {
  it('a reply to the recipient’s reply address is theirs; an unknown token or another sender proves nothing', async () => {
    const w = await world();
    const member = await makeUser(db.sql, w.ws, { role: 'member', name: 'Mia Member' });
    const project = await makeProject(db.sql, w.ws, {});
    const t = await makeTicket(db.sql, w.ws, { projectId: project.id, title: 'Outage', reporterId: w.owner.id });
    // as a notification about the ticket would: a reply address for Mia about this ticket
    const address = await issueReplyAddress(db.sql, MAIL_FROM, { workspaceId: w.ws.id, email: member.email, ticketId: t.id });
    expect(address).toMatch(/^support\+[a-z2-7]{32}@agency\.test$/);
    const token = /\+([a-z2-7]{32})@/.exec(address!)![1]!;
    // stored hashed only
    const stored = await db.sql`select token_hash from reply_tokens where workspace_id = ${w.ws.id}`;
    expect(stored).toEqual([{ token_hash: hashReplyToken(token) }]);
    expect(JSON.stringify(stored)).not.toContain(token);

    const unknown = address!.replace(token, newReplyToken());
    await w.deliver(
      await mail({ from: `Mia <${member.email}>`, to: `Support <${address}>`, subject: `Re: [${t.humanId}] Outage`, body: 'On it.' }),
      await mail({ from: `Mia <${member.email}>`, to: unknown, subject: `Re: [${t.humanId}] Outage`, body: 'Guessed token.' }),
      await mail({ from: `Olivia <${w.owner.email}>`, to: address!, subject: `Re: [${t.humanId}] Outage`, body: 'Forwarded token.' }),
    );
    await polled(w, { reply: 1, quarantined: 2 });
    const [mine, guessed, forwarded] = await log(w);
    expect(mine).toMatchObject({ status: 'reply', verdict: 'reply-token=valid', ticketId: t.id });
    expect(guessed).toMatchObject({ status: 'quarantined', verdict: 'reply-token=unknown dkim=none dmarc=fail' });
    expect(forwarded).toMatchObject({ status: 'quarantined', verdict: 'reply-token=other-recipient dkim=none dmarc=fail' });
    // Mia does not see the project's ticket, but this reply was invited: filed as hers, and she still does not see it
    const p = await page(w.owned, t.humanId);
    expect(p.comments).toEqual([expect.objectContaining({ body: 'On it.', audience: 'internal', author: expect.objectContaining({ id: member.id }) })]);
    expect(p.viewers.map((v) => v.identityId)).not.toContain(member.id);
  });

  it('a timesheet email carries the recipient’s reply address; a reply to it (headers lost) starts a ticket about that timesheet', async () => {
    const w = await world();
    const sql = db.sql;
    const [period] = await sql<{ id: string }[]>`
      insert into periods (workspace_id, period_start, period_end, closed_at) values (${w.ws.id}, '2026-10-01', '2026-10-31', now()) returning id`;
    const run = await makeBillingRun(sql, w.ws, { periodId: period!.id });
    const doc = await makeDocument(sql, w.ws, { runId: run.id, clientId: w.acme, number: 'ACME-2026-0009', deliveries: [{ email: 'ana@acme.test' }] });
    const [delivery] = await sql<
      { id: string }[]
    >`select d.id from document_deliveries d join documents o on o.timesheet_id = d.timesheet_id where o.id = ${doc.id}`;
    // the real delivery job, with a mailer that keeps what it was given
    const sent: OutgoingMail[] = [];
    const mailer = { send: async (m: OutgoingMail) => (sent.push(m), { outcome: 'accepted' as const, reply: '250 queued' }) };
    await deliverTimesheet({ ...jobCtx(), mailer }, { deliveryId: delivery!.id });
    const address = sent[0]?.headers?.['Reply-To'];
    expect(address).toMatch(/^support\+[a-z2-7]{32}@agency\.test$/);
    const token = /\+([a-z2-7]{32})@/.exec(address!)![1]!;
    expect(await sql`select email, delivery_id as "deliveryId" from reply_tokens where token_hash = ${hashReplyToken(token)}`).toEqual([
      { email: 'ana@acme.test', deliveryId: delivery!.id },
    ]);

    await w.deliver(await mail({ from: 'Ana Lopez <ana@acme.test>', to: address!, subject: 'Question', body: 'Why 12 hours on the 3rd?' }));
    await polled(w, { imported: 1 });
    const [entry] = await log(w);
    expect(entry).toMatchObject({ verdict: 'reply-token=valid' });
    expect((await page(w.owned, entry!.ticketId!)).description).toMatch(/^_In reply to timesheet ACME-2026-0009\._\n\nWhy 12 hours/);
  });
});

describe('mail never widens what a login sees (defect 4)', () => {
  it('a client user with a login who cannot see a ticket of their client mails its [KEY-N]: quarantined, still 404 for them', async () => {
    const w = await world();
    const project = await makeProject(db.sql, w.ws, { billingClientId: w.acme });
    await makeTicket(db.sql, w.ws, { projectId: project.id, title: 'First', reporterId: w.owner.id });
    const secret = await makeTicket(db.sql, w.ws, { projectId: project.id, title: 'Internal pricing', reporterId: w.owner.id });
    const carla = await makeUser(db.sql, w.ws, { role: 'client', clientId: w.acme, name: 'Carla Client' });
    const carlaCtx = makeCtx({ sql: db.sql }, await operatorPrincipal(db.sql, w.ws.slug, carla.email));
    await expect(runOp(readTicketPage, carlaCtx, { ref: secret.humanId })).rejects.toMatchObject({ status: 404 });

    // signed by her domain: she is who she says, and still may not file on a ticket she does not see
    const sign = { domain: 'example.test', privateKey: ownerKey.privateKey };
    await w.deliver(await mail({ from: `Carla <${carla.email}>`, subject: `Re: [${secret.humanId}] Internal pricing`, body: 'Let me in.', sign }));
    await polled(w, { quarantined: 1, reply: 0 });
    const [entry] = await log(w);
    expect(entry).toMatchObject({ status: 'quarantined', commentId: null, verdict: 'dkim=pass (d=example.test) dmarc=pass' });
    expect(entry!.reason).toMatch(/^sender_cannot_see_ticket/);
    await expect(runOp(readTicketPage, carlaCtx, { ref: secret.humanId })).rejects.toMatchObject({ status: 404 });
    expect(await attributedTo(w, carla.id)).toMatchObject({ comments: 0, viewer: 0, events: 0 });
  });
});

describe('names learned from mail belong to the workspace that received them (defect 9)', () => {
  it('A’s intake learns “Evil Name”; B’s admin creates the user with “Real Name”: B shows Real Name, A still its own', async () => {
    const a = await world();
    const b = await world();
    const email = `x-${randomBytes(3).toString('hex')}@ext.test`;
    await a.deliver(await mail({ from: `Evil Name <${email}>`, subject: 'Hello from outside' }));
    expect(await a.poll()).toMatchObject({ imported: 1 });
    const [identity] = await db.sql<{ id: string; name: string }[]>`select id, name from identities where lower(email) = ${email}`;
    // the shared identity is not named by one workspace's mail
    expect(identity!.name).toBe(email);
    expect((await page(a.owned, 'INBOX-1')).reporter).toMatchObject({ id: identity!.id, name: 'Evil Name' });

    // as `wt user create --workspace B --email x@ext.test --name "Real Name" --role client` does
    const { addPerson } = await import('../src/core/people/users.ts');
    expect(await addPerson(db.sql, { workspaceId: b.ws.id, email, name: 'Real Name', role: 'client', clientId: b.acme })).toBe(identity!.id);
    const inB = await makeTicket(db.sql, b.ws, { title: 'Theirs', reporterId: identity!.id });
    expect((await page(b.owned, inB.humanId)).reporter).toMatchObject({ id: identity!.id, name: 'Real Name' });
    expect((await page(a.owned, 'INBOX-1')).reporter).toMatchObject({ id: identity!.id, name: 'Evil Name' });

    // B's own mail from the same address names nobody in B: its admin's name stays
    await b.deliver(await mail({ from: `Someone Else <${email}>`, subject: 'Again' }));
    expect(await b.poll()).toMatchObject({ imported: 1 });
    const [fromMail] = await db.sql<{ id: string }[]>`select ticket_id as id from intake_messages where workspace_id = ${b.ws.id}`;
    expect((await page(b.owned, fromMail!.id)).reporter).toMatchObject({ id: identity!.id, name: 'Real Name' });

    // and an admin of A naming the person wins over what A's mail said
    await addPerson(db.sql, { workspaceId: a.ws.id, email, name: 'Xavier Admin-Named', role: 'client', clientId: a.acme });
    expect((await page(a.owned, 'INBOX-1')).reporter).toMatchObject({ name: 'Xavier Admin-Named' });
  });
});

describe('the trusted receiving server setting', () => {
  it('PUT /mailbox takes trustedAuthservId (a host name), shows it, and a later PUT without it trusts none', async () => {
    const w = await world();
    const settings = { host: imap.host, port: imap.port, secure: false, user: imap.user, password: imap.password };
    const set = (extra: object) => runOp(setMailbox, { ...w.owned, mailbox: { secrets: box, outbound: loopbackGuard } }, { ...settings, ...extra });
    expect(await set({ trustedAuthservId: 'mx.agency.test' })).toMatchObject({ trustedAuthservId: 'mx.agency.test' });
    await expect(set({ trustedAuthservId: 'mx.agency.test; dkim=pass' })).rejects.toThrow(/an authserv-id: a host name/);
    expect(await runOp(getMailbox, w.owned, {})).toMatchObject({ trustedAuthservId: 'mx.agency.test' });
    expect(await set({})).toMatchObject({ trustedAuthservId: null });
  });
});

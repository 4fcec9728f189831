import { randomBytes } from 'node:crypto';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { operatorPrincipal } from '../src/core/auth/operator.ts';
import { makeCtx, type Ctx } from '../src/core/ctx.ts';
import type { JobCtx } from '../src/core/jobs/ctx.ts';
import { listIntakeMessages } from '../src/core/mail/intake/log.ts';
import { pollMailbox, type PollResult } from '../src/core/mail/intake/poll.ts';
import { connectImap } from '../src/jobs/machinery/imap.ts';
import { setMailbox } from '../src/core/mail/intake/settings.ts';
import { runOp } from '../src/core/operation.ts';
import { SecretBox } from '../src/core/mail/secret-box.ts';
import type { Db } from '../src/db/connect.ts';
import { makeLogger } from '../src/log.ts';
import { loopbackGuard, startDovecot, type Dovecot } from './helpers/dovecot.ts';
import { testDb, type TestDb } from './helpers/db.ts';
import { makeUser, makeWorkspace, type Workspace } from './helpers/factories.ts';

// Issue 19, defect 2: one message must never block the mailbox. Hostile headers (NUL, lone
// surrogates, a 1 MB subject, invalid dates, 10,000 recipients, broken charsets) are delivered to a
// real dovecot, each followed by a normal message: the normal one is imported, the hostile one has
// its own intake-log row, the position advances past both, and no poll fails.

let db: TestDb;
let imap: Dovecot;
const box = new SecretBox(randomBytes(32));

beforeAll(async () => {
  [db, imap] = await Promise.all([testDb(), startDovecot()]);
}, 60_000);
afterAll(async () => {
  await imap?.stop();
  await db?.close();
});

function jobCtx(sql: Db): JobCtx {
  return {
    sql,
    now: () => new Date(),
    log: makeLogger('silent'),
    pdf: null,
    mailer: { send: () => Promise.reject(new Error('the intake sends no mail')) },
    mailFrom: 'Support <support@agency.test>',
    outbound: loopbackGuard,
  };
}

interface World {
  ws: Workspace;
  /** The owner, who reads the intake log. */
  owned: Ctx;
  mailboxId: string;
  poll: () => Promise<PollResult>;
  deliver: (...messages: Buffer[]) => Promise<number[]>;
}

async function world(): Promise<World> {
  const ws = await makeWorkspace(db.sql);
  const owner = await makeUser(db.sql, ws, { role: 'owner' });
  const folder = `H${randomBytes(4).toString('hex')}`;
  await imap.deliver(folder);
  const owned = makeCtx({ sql: db.sql }, await operatorPrincipal(db.sql, ws.slug, owner.email));
  await runOp(
    setMailbox,
    { ...owned, mailbox: { secrets: box, outbound: loopbackGuard } },
    { host: imap.host, port: imap.port, secure: false, user: imap.user, password: imap.password, folder },
  );
  const [{ id: mailboxId }] = await db.sql<[{ id: string }]>`select id from mailboxes where workspace_id = ${ws.id}`;
  return {
    ws,
    owned,
    mailboxId,
    poll: () => pollMailbox(jobCtx(db.sql), { mailboxId }, { connect: connectImap, secrets: box }),
    deliver: (...messages) => imap.deliver(folder, ...messages),
  };
}

let seq = 0;

/**
 * A message as raw bytes: default headers, replaced or removed (null) by `h`; a Buffer value is
 * written byte for byte (8-bit and NUL bytes a sender's software may put there).
 */
function mail(h: Record<string, string | Buffer | null> = {}, body: string | Buffer = 'Hello,\r\nthe printer on floor 2 is broken.\r\n'): Buffer {
  const headers: Record<string, string | Buffer | null> = {
    From: 'Ana Lopez <ana@acme.test>',
    To: 'Support <support@agency.test>',
    Subject: 'The printer',
    Date: 'Mon, 23 Nov 2026 09:00:00 +0000',
    'Message-ID': `<hostile-${++seq}-${randomBytes(4).toString('hex')}@acme.test>`,
    'MIME-Version': '1.0',
    'Content-Type': 'text/plain; charset=utf-8',
    ...h,
  };
  const parts: Buffer[] = [];
  for (const [name, value] of Object.entries(headers)) {
    if (value === null) continue;
    parts.push(Buffer.from(`${name}: `), typeof value === 'string' ? Buffer.from(value) : value, Buffer.from('\r\n'));
  }
  parts.push(Buffer.from('\r\n'), typeof body === 'string' ? Buffer.from(body) : body);
  return Buffer.concat(parts);
}

/** A normal message, which must be imported whatever came before it. */
const normal = () => mail({ From: 'Bob Normal <bob@normal.test>', Subject: `Normal ${++seq}` });

/** An RFC 2047 encoded word carrying UTF-16 code units as they are, lone surrogates included. */
const utf16Word = (units: number[]) => `=?UTF-16BE?B?${Buffer.from(units.flatMap((u) => [u >> 8, u & 0xff])).toString('base64')}?=`;
const utf8Word = (bytes: number[]) => `=?UTF-8?B?${Buffer.from(bytes).toString('base64')}?=`;

/** Folded into lines of 20 items, as a mail client would write a long header. */
const folded = (items: string[], sep: string) => {
  const lines: string[] = [];
  for (let i = 0; i < items.length; i += 20) lines.push(items.slice(i, i + 20).join(sep));
  return lines.join(`${sep.trimEnd()}\r\n `);
};

const withAttachment = (filenameParam: string) =>
  mail(
    { 'Content-Type': 'multipart/mixed; boundary="b1"' },
    [
      '--b1',
      'Content-Type: text/plain; charset=utf-8',
      '',
      'A file.',
      '--b1',
      'Content-Type: text/plain',
      `Content-Disposition: attachment; ${filenameParam}`,
      'Content-Transfer-Encoding: base64',
      '',
      Buffer.from('log line\n').toString('base64'),
      '--b1--',
      '',
    ].join('\r\n'),
  );

const MB = 1024 * 1024;

/**
 * The fixed table: each hostile message, and what it must become. `imported`: the bad characters
 * are replaced (U+FFFD) and the message is a ticket like any other.
 */
const HOSTILE: { name: string; message: () => Buffer; becomes: 'imported' | 'quarantined' | 'ignored'; title?: string | RegExp; reason?: RegExp }[] = [
  { name: 'a subject that decodes to a NUL', message: () => mail({ Subject: '=?UTF-8?Q?nul=00byte?=' }), becomes: 'imported', title: 'nul\uFFFDbyte' },
  { name: 'a NUL byte in the raw subject', message: () => mail({ Subject: Buffer.from('raw\0nul') }), becomes: 'imported', title: /^raw.?nul$/u },
  { name: 'a NUL in the sender name', message: () => mail({ From: '=?UTF-8?Q?Ana=00Lopez?= <ana@acme.test>' }), becomes: 'imported' },
  { name: 'a NUL byte in the raw sender address', message: () => mail({ From: Buffer.from('Ana <ana\0x@acme.test>') }), becomes: 'imported' },
  { name: 'a NUL in the Message-ID', message: () => mail({ 'Message-ID': Buffer.from(`<nul\0id-${++seq}@acme.test>`) }), becomes: 'imported' },
  {
    name: 'a NUL in References',
    message: () => mail({ References: Buffer.from('<a\0b@acme.test>'), 'In-Reply-To': Buffer.from('<c\0d@acme.test>') }),
    becomes: 'imported',
  },
  { name: 'a NUL in the body', message: () => mail({ 'Content-Transfer-Encoding': 'quoted-printable' }, 'before=00after\r\n'), becomes: 'imported' },
  {
    name: 'a lone high surrogate in the subject',
    message: () => mail({ Subject: utf16Word([0x41, 0xd800, 0x42]) }),
    becomes: 'imported',
    title: 'A\uFFFDB',
  },
  { name: 'a lone low surrogate as the sender name', message: () => mail({ From: `${utf16Word([0xdc00])} <ana@acme.test>` }), becomes: 'imported' },
  {
    name: 'a lone surrogate in an attachment name',
    message: () => withAttachment(`filename="${utf16Word([0x61, 0xd83d, 0x2e, 0x74, 0x78, 0x74])}"`),
    becomes: 'imported',
  },
  { name: 'a NUL in an attachment name', message: () => withAttachment("filename*=UTF-8''a%00b.txt"), becomes: 'imported' },
  {
    name: 'a body in UTF-16 with a lone surrogate',
    message: () =>
      mail(
        { 'Content-Type': 'text/plain; charset=utf-16be', 'Content-Transfer-Encoding': 'base64' },
        Buffer.from([0, 0x68, 0xd8, 0, 0, 0x69, 0, 0]).toString('base64'),
      ),
    becomes: 'imported',
  },
  // a header block over 1 MB is more than mailparser reads (its bound): unparseable, logged with the subject's start
  {
    name: 'a 1 MB subject',
    message: () =>
      mail({
        Subject: folded(
          Array.from({ length: MB / 8 }, (_, i) => `w${String(i).padStart(6, '0')}`),
          ' ',
        ),
      }),
    becomes: 'quarantined',
    reason: /^unparseable: Max header size/,
  },
  { name: 'a 1 MB subject on one line', message: () => mail({ Subject: 'x'.repeat(MB) }), becomes: 'quarantined', reason: /^unparseable: Max header size/ },
  {
    name: 'a 900 KB subject',
    message: () =>
      mail({
        Subject: folded(
          Array.from({ length: (900 * 1024) / 8 }, (_, i) => `w${String(i).padStart(6, '0')}`),
          ' ',
        ),
      }),
    becomes: 'imported',
    title: /^w000000 w000001 .{150,}$/,
  },
  { name: 'a 900 KB subject on one line', message: () => mail({ Subject: 'x'.repeat(900 * 1024) }), becomes: 'imported', title: 'x'.repeat(200) },
  { name: 'a Date that is no date', message: () => mail({ Date: 'not a date at all' }), becomes: 'imported' },
  { name: 'a Date that cannot exist', message: () => mail({ Date: 'Mon, 31 Feb 99999 25:61:61 +9999' }), becomes: 'imported' },
  { name: 'a Date before the epoch with a NUL', message: () => mail({ Date: Buffer.from('Thu, 1 Jan 0001 00:00:00 \0') }), becomes: 'imported' },
  {
    name: '10,000 recipients',
    message: () =>
      mail({
        To: folded(
          Array.from({ length: 10_000 }, (_, i) => `r${i}@x${i % 97}.test`),
          ', ',
        ),
      }),
    becomes: 'imported',
  },
  { name: 'an unknown charset in the subject', message: () => mail({ Subject: '=?x-no-such-charset?Q?caf=E9?=' }), becomes: 'imported' },
  { name: 'a subject of invalid UTF-8 bytes', message: () => mail({ Subject: utf8Word([0xff, 0xfe, 0xed, 0xa0, 0x80, 0xc0]) }), becomes: 'imported' },
  { name: 'raw 8-bit bytes in the subject', message: () => mail({ Subject: Buffer.from([0x63, 0x61, 0x66, 0xe9, 0xff]) }), becomes: 'imported' },
  {
    name: 'a body in an unknown charset',
    message: () => mail({ 'Content-Type': 'text/plain; charset="x-unknown-8"' }, Buffer.from([0x68, 0xff, 0xfe, 0x0d, 0x0a])),
    becomes: 'imported',
  },
  { name: 'a very long Message-ID', message: () => mail({ 'Message-ID': `<${'m'.repeat(5000)}-${++seq}@acme.test>` }), becomes: 'imported' },
  {
    name: 'a very long sender name',
    message: () => mail({ From: `"${'N'.repeat(100_000)}" <ana@acme.test>` }),
    becomes: 'imported',
  },
  {
    name: 'a sender address longer than any address',
    message: () => mail({ From: `${'a'.repeat(100_000)}@acme.test` }),
    becomes: 'quarantined',
    reason: /^no_sender/,
  },
];

async function position(mailboxId: string) {
  const [mb] = await db.sql<{ lastUid: number; lastError: string | null }[]>`
    select last_uid::int as "lastUid", last_error as "lastError" from mailboxes where id = ${mailboxId}`;
  return mb!;
}

async function logRow(w: World, uid: number) {
  return db.sql<{ status: string; reason: string | null; subject: string | null; ticketId: string | null }[]>`
    select status, reason, subject, ticket_id as "ticketId" from intake_messages where workspace_id = ${w.ws.id} and uid = ${uid}`;
}

async function title(ticketId: string | null) {
  const [t] = await db.sql<{ title: string }[]>`select title from tickets where id = ${ticketId}`;
  return t?.title;
}

/** A workspace whose mailbox was polled once (the first poll sets the position): messages delivered next are read by UID. */
async function polledWorld(): Promise<World> {
  const w = await world();
  expect((await w.poll()).status).toBe('polled');
  return w;
}

describe('hostile headers never block the mailbox (fixed table)', () => {
  for (const c of HOSTILE) {
    it(`${c.name}: logged as ${c.becomes}, and the normal message after it is imported`, async () => {
      const w = await polledWorld();
      const [bad, good] = await w.deliver(c.message(), normal());
      const r = await w.poll();
      expect(r, 'error' in r ? r.error : '').toMatchObject({ status: 'polled' });
      expect(await position(w.mailboxId)).toEqual({ lastUid: good, lastError: null });
      const [badRow] = await logRow(w, bad!);
      expect(badRow, `no log row for UID ${bad}`).toBeDefined();
      expect(badRow!.status, badRow!.reason ?? '').toBe(c.becomes);
      if (c.reason) expect(badRow!.reason).toMatch(c.reason);
      if (c.title !== undefined) {
        const t = await title(badRow!.ticketId);
        if (typeof c.title === 'string') expect(t).toBe(c.title);
        else expect(t).toMatch(c.title);
      }
      const [goodRow] = await logRow(w, good!);
      expect(goodRow).toMatchObject({ status: 'imported' });
    }, 30_000);
  }
});

describe('hostile headers never block the mailbox (generated)', () => {
  // UTF-16 code units drawn towards the ones PostgreSQL refuses (NUL, lone surrogates)
  const unit = fc.oneof(fc.integer({ min: 0, max: 0xffff }), fc.constantFrom(0, 0xd800, 0xdbff, 0xdc00, 0xdfff, 0x0d, 0x0a));
  const units = fc.array(unit, { maxLength: 24 });
  const bytes = fc.array(fc.integer({ min: 0, max: 255 }), { maxLength: 24 });
  /** A header value a hostile sender could write: encoded words of any code units or bytes, or raw bytes without line breaks. */
  const value = fc.oneof(
    units.map(utf16Word),
    bytes.map(utf8Word),
    bytes.map((b) => Buffer.from(b.filter((x) => x !== 0x0d && x !== 0x0a))),
    fc.string({ unit: 'binary', maxLength: 24 }).map((s) => s.replace(/[\r\n]/g, ' ')),
  );
  const message = fc.record({ subject: value, name: value, date: value, to: value });

  it('40 generated messages, each followed by a normal one: every one is logged, every normal one imported, the position at the last', async () => {
    const w = await polledWorld();
    const cases = fc.sample(message, { numRuns: 40, seed: 19 });
    const messages = cases.flatMap((c) => [
      mail({ Subject: c.subject, From: Buffer.concat([Buffer.from(c.name), Buffer.from(' <ana@acme.test>')]), Date: c.date, To: c.to }),
      normal(),
    ]);
    const uids = await w.deliver(...messages);
    const r = await w.poll();
    expect(r, 'error' in r ? r.error : '').toMatchObject({ status: 'polled' });
    expect(await position(w.mailboxId)).toEqual({ lastUid: uids.at(-1), lastError: null });
    const rows = await db.sql<{ uid: number; status: string }[]>`
      select uid::int as uid, status from intake_messages where workspace_id = ${w.ws.id} order by uid`;
    expect(rows.map((r) => r.uid)).toEqual(uids);
    expect(rows.filter((_, i) => i % 2 === 1).every((r) => r.status === 'imported')).toBe(true);
  }, 60_000);
});

describe('a message that cannot be stored', () => {
  it('is quarantined with a minimal log row (its UID and the reason), nothing else of it is kept, and the next one is imported', async () => {
    const w = await polledWorld();
    await db.sql.unsafe(`create or replace function refuse_log() returns trigger language plpgsql as $$
      begin if new.subject = 'Refuse the log row' then raise exception 'the intake log refuses this one'; end if; return new; end $$`);
    await db.sql.unsafe(`create trigger refuse_log before insert on intake_messages for each row execute function refuse_log()`);
    let uids: number[];
    try {
      uids = await w.deliver(mail({ Subject: 'Refuse the log row' }), normal());
      const r = await w.poll();
      expect(r, 'error' in r ? r.error : '').toMatchObject({ status: 'polled', counts: { quarantined: 1, imported: 1 } });
    } finally {
      await db.sql.unsafe(`drop trigger refuse_log on intake_messages; drop function refuse_log()`);
    }
    const [bad] = await db.sql<Record<string, unknown>[]>`
      select status, reason, uid::int as uid, uid_validity is not null as "hasUidValidity", dedupe_key is not null as "hasKey",
             subject, from_address as "from", message_id as "messageId", ticket_id as "ticketId"
      from intake_messages where workspace_id = ${w.ws.id} and uid = ${uids[0]!}`;
    expect(bad).toEqual({
      status: 'quarantined',
      reason: 'store_failed: the intake log refuses this one',
      uid: uids[0],
      hasUidValidity: true,
      hasKey: true,
      subject: null,
      from: null,
      messageId: null,
      ticketId: null,
    });
    // the failed attempt left nothing: its ticket was rolled back with its log row
    const titles = await db.sql<{ title: string }[]>`select title from tickets where workspace_id = ${w.ws.id} order by number`;
    expect(titles.map((t) => t.title)).toEqual([expect.stringMatching(/^Normal /)]);
    // the owner's intake log names it by UID
    const log = await runOp(listIntakeMessages, w.owned, { status: 'quarantined' });
    expect(log.items).toEqual([expect.objectContaining({ uid: uids[0], reason: 'store_failed: the intake log refuses this one', from: null, subject: null })]);
    expect(await position(w.mailboxId)).toEqual({ lastUid: uids[1], lastError: null });
  });

  it('when not even its minimal row can be written, the poll fails with lastError naming its UID, and goes on once it can', async () => {
    const w = await polledWorld();
    const [bad, good] = await w.deliver(mail({ Subject: 'Unstorable' }), normal());
    await db.sql.unsafe(`create or replace function refuse_uid() returns trigger language plpgsql as $$
      begin if new.mailbox_id = '${w.mailboxId}' and new.uid = ${bad} then raise exception 'nothing of this one may be stored'; end if; return new; end $$`);
    await db.sql.unsafe(`create trigger refuse_uid before insert on intake_messages for each row execute function refuse_uid()`);
    try {
      const r = await w.poll();
      expect(r).toMatchObject({ status: 'failed' });
      const { lastError, lastUid } = await position(w.mailboxId);
      expect(lastError).toContain(`UID ${bad}`);
      expect(lastError).toContain('nothing of this one may be stored');
      expect(lastUid).toBeLessThan(bad!);
    } finally {
      await db.sql.unsafe(`drop trigger refuse_uid on intake_messages; drop function refuse_uid()`);
    }
    const r = await w.poll();
    expect(r, 'error' in r ? r.error : '').toMatchObject({ status: 'polled', counts: { imported: 2 } });
    expect(await position(w.mailboxId)).toEqual({ lastUid: good, lastError: null });
  });
});

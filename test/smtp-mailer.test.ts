import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { simpleParser } from 'mailparser';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.ts';
import { mailFromConfig } from '../src/jobs/machinery/mail-from-config.ts';
import type { OutgoingMail } from '../src/core/mail/mailer.ts';
import { startOutbox } from '../src/jobs/machinery/outbox-server.ts';
import { parseSmtpUrl, SmtpMailer } from '../src/jobs/machinery/smtp-mailer.ts';
import { makeLogger } from '../src/log.ts';
import { answerAt, startSmtpSink, type SmtpSink } from './helpers/smtp.ts';

/**
 * The SMTP mailer against a real SMTP server (smtp-server on loopback): each outcome comes from
 * the SMTP step the conversation reached, the way the delivery job records it.
 */
let smtp: SmtpSink;
let mailer: SmtpMailer;
beforeAll(async () => {
  smtp = await startSmtpSink();
  mailer = new SmtpMailer(smtp.url);
});
afterAll(() => smtp.close());
beforeEach(() => smtp.program(null));

const pdf = Buffer.from([0x25, 0x50, 0x44, 0x46, 0x2d, 0x31, 0x2e, 0x37, 0x0a, 0x00, 0xff, 0xfe, 0x80, 0x0d, 0x0a, 0x2e, 0x0d, 0x0a]);
const csv = Buffer.from('number,hours\r\n.ACME-2026-0001,1.50\r\n', 'utf8');

let n = 0;
function mail(over: Partial<OutgoingMail> = {}): OutgoingMail {
  n++;
  return {
    from: 'Work tracker <billing@agency.test>',
    to: `ap-${n}@acme.test`,
    subject: 'Timesheet ACME-2026-0001 — Acme Corp',
    text: 'Hello,\n\nplease find attached timesheet ACME-2026-0001.\n',
    messageId: `<test-${n}@agency.test>`,
    headers: { 'Auto-Submitted': 'auto-generated' },
    attachments: [
      { filename: 'ACME-2026-0001.pdf', contentType: 'application/pdf', content: pdf },
      { filename: 'ACME-2026-0001.csv', contentType: 'text/csv; charset=utf-8', content: csv },
    ],
    ...over,
  };
}

describe('accepted', () => {
  it('250 after DATA: the message arrives whole, with our Message-ID, Auto-Submitted and the exact attachment bytes', async () => {
    const m = mail();
    const result = await mailer.send(m);
    expect(result.outcome).toBe('accepted');
    expect(result.reply).toMatch(/^250 /);
    const [got, ...more] = smtp.messagesTo(m.to);
    expect(more).toEqual([]);
    expect(got!.envelope).toEqual({ from: 'billing@agency.test', to: [m.to] });
    expect(got!.messageId).toBe(m.messageId);
    expect(got!.headers.get('auto-submitted')).toBe('auto-generated');
    expect(got!.subject).toBe(m.subject);
    expect(got!.text?.trim()).toBe(m.text.trim());
    expect(got!.attachments.map((a) => [a.filename, a.contentType])).toEqual([
      ['ACME-2026-0001.pdf', 'application/pdf'],
      ['ACME-2026-0001.csv', 'text/csv'],
    ]);
    // binary bytes and lines starting with a dot survive the transfer exactly
    expect(Buffer.compare(got!.attachments[0]!.content, pdf)).toBe(0);
    expect(Buffer.compare(got!.attachments[1]!.content, csv)).toBe(0);
  });

  it('logs in when the URL carries credentials', async () => {
    const guarded = await startSmtpSink({ auth: { user: 'billing', pass: 's3cret: with spaces' } });
    try {
      expect(guarded.url).toContain('billing:s3cret');
      expect((await new SmtpMailer(guarded.url).send(mail())).outcome).toBe('accepted');
      const wrong = await new SmtpMailer(guarded.url.replace('s3cret', 'wrong')).send(mail());
      expect(wrong).toEqual({ outcome: 'rejected', reply: '535 Invalid username or password' });
      expect(guarded.messages).toHaveLength(1);
    } finally {
      await guarded.close();
    }
  });
});

describe('refusals by reply code', () => {
  it('5xx at RCPT: rejected, with the reply line; nothing delivered', async () => {
    smtp.program(answerAt('rcpt', { code: 550, text: '5.1.1 mailbox unavailable' }));
    const m = mail();
    expect(await mailer.send(m)).toEqual({ outcome: 'rejected', reply: '550 5.1.1 mailbox unavailable' });
    expect(smtp.received.filter((r) => r.messageId === m.messageId)).toEqual([]);
  });

  it('5xx at the end of DATA: rejected (the data arrived, the server refused it)', async () => {
    smtp.program(answerAt('data', { code: 554, text: '5.7.1 message content rejected' }));
    const m = mail();
    expect(await mailer.send(m)).toEqual({ outcome: 'rejected', reply: '554 5.7.1 message content rejected' });
    expect(smtp.received.filter((r) => r.messageId === m.messageId)).toHaveLength(1);
    expect(smtp.messagesTo(m.to)).toEqual([]);
  });

  it('4xx at RCPT: temporary', async () => {
    smtp.program(answerAt('rcpt', { code: 451, text: '4.3.0 try again later' }));
    expect(await mailer.send(mail())).toEqual({ outcome: 'temporary', reply: '451 4.3.0 try again later' });
  });

  it('4xx at the end of DATA: temporary; the next attempt is accepted', async () => {
    smtp.program(answerAt('data', { code: 452, text: '4.3.1 insufficient storage' }, { times: 1 }));
    const m = mail();
    expect(await mailer.send(m)).toEqual({ outcome: 'temporary', reply: '452 4.3.1 insufficient storage' });
    expect((await mailer.send(m)).outcome).toBe('accepted');
    expect(smtp.messagesTo(m.to)).toHaveLength(1);
  });

  it('421 instead of the greeting: temporary', async () => {
    smtp.program(answerAt('connect', { code: 421, text: 'too busy' }));
    expect(await mailer.send(mail())).toEqual({ outcome: 'temporary', reply: '421 too busy' });
  });
});

describe('broken connections: by the step reached', () => {
  it('connection refused (nothing listening): temporary, with the network error', async () => {
    const port = await freePort();
    const result = await new SmtpMailer(`smtp://127.0.0.1:${port}`).send(mail());
    expect(result.outcome).toBe('temporary');
    expect(result.reply).toContain('ECONNREFUSED');
  });

  it('dropped before DATA (at RCPT): temporary: the server cannot have the message', async () => {
    smtp.program(answerAt('rcpt', 'drop'));
    const m = mail();
    expect(await mailer.send(m)).toEqual({ outcome: 'temporary', reply: 'Connection closed unexpectedly' });
    expect(smtp.received.filter((r) => r.messageId === m.messageId)).toEqual([]);
  });

  it('dropped before the greeting: temporary', async () => {
    smtp.program(answerAt('connect', 'drop'));
    expect((await mailer.send(mail())).outcome).toBe('temporary');
  });

  it('dropped after the whole message was sent, before the reply: unknown (the server has the data)', async () => {
    smtp.program(answerAt('data', 'drop'));
    const m = mail();
    expect(await mailer.send(m)).toEqual({ outcome: 'unknown', reply: 'Connection closed unexpectedly' });
    expect(smtp.received.filter((r) => r.messageId === m.messageId)).toHaveLength(1);
    expect(smtp.messagesTo(m.to)).toEqual([]);
  });

  it('a server that goes silent after the data: unknown once the socket timeout passes', async () => {
    const silent = await silentAfterData();
    try {
      // the production socket timeout is 60 s; a test cannot wait that long
      const result = await new SmtpMailer(silent.url, { socketTimeout: 300 }).send(mail());
      expect(result.outcome).toBe('unknown');
      expect(result.reply).toMatch(/timeout/i);
      expect(silent.dataSeen()).toBe(true);
    } finally {
      await silent.close();
    }
  });
});

describe('steps told to the caller before the conversation goes past them', () => {
  it('connected, envelope, data in order: each awaited, `data` before any byte of the message reached the server', async () => {
    const m = mail();
    const seen: string[] = [];
    smtp.program((e) => {
      if (e.step !== 'connect') seen.push(`server:${e.step}`);
      return undefined;
    });
    const result = await mailer.send(m, async (step) => {
      await new Promise((r) => setTimeout(r, 20)); // a slow database write: the server must wait for it
      seen.push(step);
    });
    expect(result.outcome).toBe('accepted');
    expect(seen).toEqual(['connected', 'server:mail', 'server:rcpt', 'envelope', 'data', 'server:data']);
    expect(smtp.messagesTo(m.to)).toHaveLength(1);
  });

  it.each(['connected', 'envelope', 'data'])('a step that cannot be recorded (%s): temporary, and the server received no message', async (failing) => {
    const m = mail();
    const result = await mailer.send(m, async (step) => {
      if (step === failing) throw new Error('database unreachable');
    });
    expect(result).toEqual({ outcome: 'temporary', reply: 'Not sent: the step could not be recorded: database unreachable' });
    expect(smtp.received.filter((r) => r.messageId === m.messageId)).toEqual([]);
  });
});

it('a malformed recipient is rejected without a connection attempt to retry', async () => {
  const result = await mailer.send(mail({ to: 'not an address' }));
  expect(result.outcome).toBe('rejected');
});

it('reads smtp:// and smtps:// URLs', () => {
  expect(parseSmtpUrl('smtp://user%40x:p%3Ass@mail.example.com')).toEqual({
    host: 'mail.example.com',
    port: 587,
    secure: false,
    auth: { user: 'user@x', pass: 'p:ss' },
  });
  expect(parseSmtpUrl('smtps://[::1]:2465')).toEqual({ host: '::1', port: 2465, secure: true, auth: null });
  expect(parseSmtpUrl('smtps://mail.example.com').port).toBe(465);
  expect(() => parseSmtpUrl('http://mail.example.com')).toThrow(/smtp:\/\//);
});

describe('the embedded default: a local outbox server', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'wt-outbox-'));
  });
  afterEach(() => rm(dir, { recursive: true, force: true }));

  it('stores each message as an .eml file, as received, with its envelope', async () => {
    const outbox = await startOutbox({ dir: join(dir, 'outbox') });
    try {
      expect(outbox.url).toMatch(/^smtp:\/\/127\.0\.0\.1:\d+$/);
      const m = mail();
      const result = await new SmtpMailer(outbox.url).send(m);
      expect(result.outcome).toBe('accepted');
      const files = await readdir(outbox.dir);
      expect(files).toHaveLength(1);
      expect(files[0]).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}\.\d{3}Z-[0-9a-f]{8}\.eml$/);
      expect(result.reply).toContain(files[0]);
      const raw = await readFile(join(outbox.dir, files[0]!));
      expect(raw.toString('latin1')).toMatch(new RegExp(`^Return-Path: <billing@agency\\.test>\r\nDelivered-To: ${m.to}\r\n`));
      const parsed = await simpleParser(raw);
      expect(parsed.messageId).toBe(m.messageId);
      expect(parsed.headers.get('auto-submitted')).toBe('auto-generated');
      expect(parsed.attachments.map((a) => Buffer.compare(a.content, a.filename!.endsWith('.pdf') ? pdf : csv))).toEqual([0, 0]);
    } finally {
      await outbox.close();
    }
    expect((await new SmtpMailer(outbox.url).send(mail())).outcome).toBe('temporary');
  });

  it('is what the worker sends to without SMTP_URL (under DATA_DIR/outbox); with SMTP_URL there is none', async () => {
    const local = await mailFromConfig(loadConfig({ DATA_DIR: dir }), makeLogger('silent'));
    try {
      expect(local.outbox!.dir).toBe(join(dir, 'outbox'));
      expect((await local.mailer.send(mail())).outcome).toBe('accepted');
      expect(await readdir(local.outbox!.dir)).toHaveLength(1);
    } finally {
      await local.outbox?.close();
    }
    const remote = await mailFromConfig(loadConfig({ DATA_DIR: dir, SMTP_URL: smtp.url }), makeLogger('silent'));
    expect(remote.outbox).toBeNull();
    const m = mail();
    expect((await remote.mailer.send(m)).outcome).toBe('accepted');
    expect(smtp.messagesTo(m.to)).toHaveLength(1);
  });
});

/** A port nothing listens on: bound, read, released. */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** A hand-written SMTP server that takes the whole message and then never answers (a hung server). */
async function silentAfterData(): Promise<{ url: string; dataSeen: () => boolean; close: () => Promise<void> }> {
  let seen = false;
  const sockets = new Set<import('node:net').Socket>();
  const server = createServer((socket) => {
    sockets.add(socket);
    let inData = false;
    let buffer = '';
    socket.write('220 silent ESMTP\r\n');
    socket.on('data', (chunk) => {
      buffer += chunk.toString('latin1');
      let i: number;
      while (!inData && (i = buffer.indexOf('\r\n')) >= 0) {
        const line = buffer.slice(0, i);
        buffer = buffer.slice(i + 2);
        if (/^EHLO/i.test(line)) socket.write('250 silent\r\n');
        else if (/^DATA/i.test(line)) {
          inData = true;
          socket.write('354 go ahead\r\n');
        } else socket.write('250 OK\r\n');
      }
      if (inData && buffer.includes('\r\n.\r\n')) seen = true; // and no reply, ever
    });
    socket.on('error', () => undefined);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `smtp://127.0.0.1:${port}`,
    dataSeen: () => seen,
    close: () => {
      for (const s of sockets) s.destroy();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { htmlToMarkdown, replyParserGuarded, ticketTitle, visibleReply } from '../src/core/mail/intake/body.ts';
import { noiseReason } from '../src/core/mail/intake/noise.ts';
import { parseMessage, DEFAULT_LIMITS } from '../src/core/mail/intake/parse.ts';
import { dedupeKey, ownMessageId, readRaw } from '../src/core/mail/intake/raw.ts';
import { answeredIds, subjectTokens } from '../src/core/mail/intake/thread.ts';
import { loadSecretBox, SecretBox } from '../src/core/mail/secret-box.ts';
import { eml } from './helpers/dovecot.ts';

// Issue 12: the intake's rules over the fixture corpus (test/fixtures/mail), without a server.

const own = new Set(['support@agency.test', 'intake@agency.test']);
const noise = (name: string) => {
  const raw = readRaw(eml(name));
  const from = /<([^>]+)>|(\S+@\S+)/.exec(raw.headers.get('from')?.[0] ?? '');
  return noiseReason(raw, own, (from?.[1] ?? from?.[2] ?? '').toLowerCase() || null);
};

describe('loop and noise rules: one fixture per header', () => {
  it.each([
    ['noise-auto-submitted', 'auto_submitted'],
    ['noise-auto-submitted-generated', 'auto_submitted'],
    ['noise-precedence-bulk', 'precedence'],
    ['noise-precedence-junk', 'precedence'],
    ['noise-precedence-list', 'precedence'],
    ['noise-list-id', 'list_id'],
    ['noise-x-autoreply', 'autoreply_header'],
    ['noise-x-autorespond', 'autoreply_header'],
    ['noise-x-autoresponder', 'autoreply_header'],
    ['noise-auto-response-suppress', 'auto_response_suppress'],
    ['noise-exchange-rules-loop', 'exchange_rules_loop'],
    ['noise-x-loop', 'x_loop'],
    ['noise-null-return-path', 'null_return_path'],
    ['noise-delivery-report', 'delivery_report'],
    ['noise-failed-recipients', 'bounce'],
    ['noise-mailer-daemon', 'bounce'],
    ['noise-own-address', 'own_address'],
  ])('%s is ignored as %s', (fixture, reason) => {
    expect(noise(fixture)).toBe(reason);
  });

  it.each(['plain', 'html-only', 'two-attachments', 'reply-en', 'reply-de', 'reply-fr', 'person-auto-submitted-no'])('%s is a person writing', (fixture) => {
    expect(noise(fixture)).toBeNull();
  });

  it('X-Loop naming someone else, and X-Auto-Response-Suppress other than All, are not noise', () => {
    expect(noise('person-auto-submitted-no')).toBeNull();
    const raw = readRaw(eml('plain', { headers: { 'X-Loop': 'helpdesk@elsewhere.test', 'X-Auto-Response-Suppress': 'OOF, DR' } }));
    expect(noiseReason(raw, own, 'ana@acme.test')).toBeNull();
  });
});

describe('quoted replies: email-reply-parser on the corpus (en, de, fr)', () => {
  const body = async (fixture: string) => (await parseMessage(eml(fixture), DEFAULT_LIMITS)).text!;

  it.each([
    ['reply-en', 'It works again after the restart, thank you!'],
    ['reply-de', 'Der Drucker im zweiten Stock druckt wieder leere Seiten.'],
    ['reply-fr', "Merci, l'imprimante fonctionne de nouveau."],
    ['reply-subject-token', 'Adding: it is the one next to the kitchen.'],
  ])('%s keeps only what the sender wrote', async (fixture, text) => {
    expect(visibleReply(await body(fixture))).toBe(text);
  });

  it('a message with no quote is kept whole, even past the part the parser reads', () => {
    const long = `${'A line of the reply that goes on.\n'.repeat(1000)}The end.`;
    expect(visibleReply(long)).toBe(long.trim());
  });

  it('guards its patterns against ReDoS: RE2 is in use, and crafted text takes linear time', () => {
    expect(replyParserGuarded).toBe(true);
    const crafted = `Hello\n${'Op schreef x\n'.repeat(3200)}`;
    const started = performance.now();
    visibleReply(crafted);
    // JavaScript regexes took about a minute on this text; RE2 about 0.1 s
    expect(performance.now() - started).toBeLessThan(3000);
  });
});

describe('titles, threading and keys', () => {
  it('a title from the subject: Re/Fwd prefixes (any language, repeated) removed, at most 200 characters', () => {
    expect(ticketTitle('Fwd: RE: AW: WG: TR: The printer')).toBe('The printer');
    expect(ticketTitle('  Re[2]:  spaced   out  ')).toBe('spaced out');
    expect(ticketTitle('Regarding the invoice')).toBe('Regarding the invoice');
    expect(ticketTitle('')).toBe('(no subject)');
    expect(Array.from(ticketTitle('é'.repeat(300)))).toHaveLength(200);
  });

  it('answered ids: In-Reply-To first, then References from the newest; subject tokens', () => {
    const raw = readRaw(eml('reply-en', { headers: { References: '<a@x> <b@x> <plain-1@acme.test>', 'In-Reply-To': '<c@x>' } }));
    expect(answeredIds(raw)).toEqual(['c@x', 'plain-1@acme.test', 'b@x', 'a@x']);
    expect(subjectTokens('Re: [ACME-12] and [inbox-3] but not [X] or ACME-4')).toEqual([
      { prefix: 'ACME', number: 12 },
      { prefix: 'INBOX', number: 3 },
    ]);
  });

  it('the dedupe key: trace headers do not change it; the content, or a reused Message-ID with other content, does', () => {
    const key = (b: Buffer) => {
      const raw = readRaw(b);
      return dedupeKey(raw, ownMessageId(raw));
    };
    const original = key(eml('plain'));
    expect(key(eml('plain', { headers: { Received: 'from relay by mx; Mon, 23 Nov 2026 09:05:00 +0000', 'Delivered-To': 'x@y' } }))).toBe(original);
    expect(key(eml('plain', { headers: { Subject: 'Another problem' } }))).not.toBe(original);
    expect(key(Buffer.from(eml('plain').toString().replace('blank pages', 'grey pages')))).not.toBe(original);
    expect(key(eml('plain', { headers: { 'Message-ID': '<other@acme.test>' } }))).not.toBe(original);
    const anonymous = key(eml('plain', { headers: { 'Message-ID': null } }));
    expect(key(eml('plain', { headers: { 'Message-ID': null } }))).toBe(anonymous);
    expect(anonymous).not.toBe(original);
  });

  it('HTML to Markdown keeps structure and links, drops scripts, styles, images and unsafe links', () => {
    const md = htmlToMarkdown(
      '<style>x{}</style><h2>Title</h2><p>a <strong>b</strong> <a href="javascript:x()">c</a> <img src="https://t.example/p.gif"></p><script>bad()</script>',
    );
    expect(md).toBe('## Title\n\na **b** c');
  });
});

describe('the secret box (AES-256-GCM)', () => {
  it('opens what it sealed, for the same context only; a changed byte is refused', () => {
    const box = new SecretBox(randomBytes(32));
    const sealed = box.seal('pässwörd', 'mailbox:a');
    expect(sealed.includes(Buffer.from('pässwörd'))).toBe(false);
    expect(box.open(sealed, 'mailbox:a')).toBe('pässwörd');
    expect(() => box.open(sealed, 'mailbox:b')).toThrow();
    const tampered = Buffer.from(sealed);
    tampered[tampered.length - 1]! ^= 1;
    expect(() => box.open(tampered, 'mailbox:a')).toThrow();
    expect(() => new SecretBox(randomBytes(32)).open(sealed, 'mailbox:a')).toThrow();
    expect(box.seal('same', 'c').equals(box.seal('same', 'c'))).toBe(false);
  });

  it('WT_SECRET_KEY in hex or base64; on the embedded default a key generated once under DATA_DIR and reused; none with an external database', async () => {
    const key = randomBytes(32);
    const hex = loadSecretBox({ WT_SECRET_KEY: key.toString('hex'), DATABASE_URL: 'postgres://x/y', DATA_DIR: '.data' })!;
    const b64 = loadSecretBox({ WT_SECRET_KEY: key.toString('base64'), DATABASE_URL: undefined, DATA_DIR: '.data' })!;
    expect(b64.open(hex.seal('s', 'c'), 'c')).toBe('s');
    expect(loadSecretBox({ WT_SECRET_KEY: undefined, DATABASE_URL: 'postgres://x/y', DATA_DIR: '.data' })).toBeNull();

    const dir = await mkdtemp(path.join(os.tmpdir(), 'wt-key-'));
    try {
      const dataDir = path.join(dir, 'data');
      const embedded = loadSecretBox({ WT_SECRET_KEY: undefined, DATABASE_URL: undefined, DATA_DIR: dataDir })!;
      const file = path.join(dataDir, 'secret.key');
      expect((await stat(file)).mode & 0o777).toBe(0o600);
      const written = (await readFile(file, 'utf8')).trim();
      expect(written).toMatch(/^[0-9a-f]{64}$/);
      // another process (a fresh box from the file) opens what this one sealed
      expect(new SecretBox(Buffer.from(written, 'hex')).open(embedded.seal('pw', 'c'), 'c')).toBe('pw');
      // a key file already there (written by an earlier start) is read, never replaced
      const earlier = randomBytes(32);
      const otherDir = path.join(dir, 'other');
      await mkdir(otherDir);
      await writeFile(path.join(otherDir, 'secret.key'), `${earlier.toString('hex')}\n`, { mode: 0o600 });
      const reused = loadSecretBox({ WT_SECRET_KEY: undefined, DATABASE_URL: undefined, DATA_DIR: otherDir })!;
      expect(reused.open(new SecretBox(earlier).seal('pw', 'c'), 'c')).toBe('pw');
      expect((await readFile(path.join(otherDir, 'secret.key'), 'utf8')).trim()).toBe(earlier.toString('hex'));
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

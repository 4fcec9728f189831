import { Readable, type Writable } from 'node:stream';
import MailComposer from 'nodemailer/lib/mail-composer';
import SMTPConnection from 'nodemailer/lib/smtp-connection';
import type { Mailer, OnSendStep, OutgoingMail, SendResult } from '../../core/mail/mailer.ts';

/** Where and how to reach the SMTP server: `smtp://user:pass@host:587` (STARTTLS when offered) or `smtps://` (implicit TLS). */
export interface SmtpTarget {
  host: string;
  port: number;
  secure: boolean;
  auth: { user: string; pass: string } | null;
}

export function parseSmtpUrl(url: string): SmtpTarget {
  const u = new URL(url);
  if (u.protocol !== 'smtp:' && u.protocol !== 'smtps:') throw new Error(`SMTP_URL must start with smtp:// or smtps://, not ${u.protocol}//`);
  const secure = u.protocol === 'smtps:';
  const user = decodeURIComponent(u.username);
  return {
    host: u.hostname.replace(/^\[(.*)\]$/, '$1'),
    port: u.port ? Number(u.port) : secure ? 465 : 587,
    secure,
    auth: user ? { user, pass: decodeURIComponent(u.password) } : null,
  };
}

/** Milliseconds: to connect, for the greeting, and of silence at any later step. */
export interface SmtpTimeouts {
  connectionTimeout: number;
  greetingTimeout: number;
  socketTimeout: number;
}

const TIMEOUTS: SmtpTimeouts = { connectionTimeout: 10_000, greetingTimeout: 10_000, socketTimeout: 60_000 };

/** What nodemailer attaches to its errors: the server's reply and its code when there was one. */
interface SmtpError extends Error {
  code?: string;
  response?: string;
  responseCode?: number;
}

/** Errors of the conversation itself (no reply to go by): the network, a timeout, TLS, a garbled reply. */
const NETWORK_ERRORS = new Set(['ECONNECTION', 'ETIMEDOUT', 'ESOCKET', 'EDNS', 'ETLS', 'EPROTOCOL']);

/** One line for `detail`: a multi-line reply joined, bounded. */
const oneLine = (s: string) =>
  s
    .replace(/\s*[\r\n]+\s*/g, ' ')
    .trim()
    .slice(0, 1000);

/**
 * A Mailer over SMTP, one connection per message, that tells the outcomes apart by the step the
 * conversation reached (nodemailer's own transport reports a connection lost before and after
 * DATA alike): a reply decides by its class (2xx accepted, 4xx temporary, 5xx rejected, at any
 * step); without one, a failure after the whole message (its final dot) was written is `unknown`
 * (the server may have taken it), before that `temporary`. The caller's `onStep` is awaited at
 * each step (connected, envelope, data) before the conversation goes on, so a caller that dies
 * mid-send has recorded how far it got; `data` is told before the first byte of the message.
 */
export class SmtpMailer implements Mailer {
  private readonly target: SmtpTarget;
  private readonly timeouts: SmtpTimeouts;

  constructor(url: string, timeouts: Partial<SmtpTimeouts> = {}) {
    this.target = parseSmtpUrl(url);
    this.timeouts = { ...TIMEOUTS, ...timeouts };
  }

  async send(mail: OutgoingMail, onStep: OnSendStep = async () => {}): Promise<SendResult> {
    const node = new MailComposer({
      from: mail.from,
      to: mail.to,
      subject: mail.subject,
      text: mail.text,
      messageId: mail.messageId,
      headers: mail.headers,
      attachments: mail.attachments.map((a) => ({ filename: a.filename, contentType: a.contentType, content: Buffer.from(a.content) })),
    }).compile();
    const envelope = node.getEnvelope();
    const raw = await node.build();
    return this.transmit({ from: envelope.from || undefined, to: envelope.to }, raw, onStep);
  }

  private transmit(envelope: { from?: string; to: string[] }, raw: Buffer, onStep: OnSendStep): Promise<SendResult> {
    const { host, port, secure, auth } = this.target;
    const conn = new SMTPConnection({ host, port, secure, ...this.timeouts });
    let dataSent = false;
    return new Promise<SendResult>((resolve) => {
      let settled = false;
      const finish = (result: SendResult) => {
        if (settled) return;
        settled = true;
        resolve(result);
        if (result.outcome === 'accepted') conn.quit();
        else conn.close();
      };
      const failed = (err: SmtpError) => finish(classify(err, dataSent));
      // The caller could not record a step: stop before any message data, so nothing was sent.
      const unrecorded = (err: unknown) =>
        finish({ outcome: 'temporary', reply: oneLine(`Not sent: the step could not be recorded: ${err instanceof Error ? err.message : String(err)}`) });
      // Errors come both as events and through the callbacks; the first one decides.
      conn.on('error', failed);
      conn.once('end', () => finish({ outcome: dataSent ? 'unknown' : 'temporary', reply: 'Connection closed unexpectedly' }));
      const beforeData = async () => {
        await onStep('envelope');
        await onStep('data');
      };
      const message = new TrackedMessage(raw, beforeData, () => (dataSent = true), unrecorded);
      const deliver = () =>
        onStep('connected').then(
          () =>
            conn.send(envelope, message, (err, info) => {
              if (err) failed(err);
              else finish({ outcome: 'accepted', reply: oneLine(info.response) });
            }),
          unrecorded,
        );
      conn.connect((err) => {
        if (err) return failed(err);
        if (!auth) return deliver();
        conn.login(auth, (loginErr) => (loginErr ? failed(loginErr) : deliver()));
      });
    });
  }
}

function classify(err: SmtpError, dataSent: boolean): SendResult {
  const code = err.responseCode ?? 0;
  if (code >= 500) return { outcome: 'rejected', reply: oneLine(err.response ?? err.message) };
  if (code >= 400) return { outcome: 'temporary', reply: oneLine(err.response ?? err.message) };
  // No reply to go by: nodemailer refused the message itself (a malformed address): retrying cannot help.
  if (!NETWORK_ERRORS.has(err.code ?? '')) return { outcome: 'rejected', reply: oneLine(err.message) };
  return { outcome: dataSent ? 'unknown' : 'temporary', reply: oneLine(err.message) };
}

/**
 * The message as a stream that tells when it was wholly written to the connection: nodemailer
 * pipes it (after the envelope was accepted and DATA answered 354) into its dot-stuffing stream,
 * whose readable side ends once the final dot went to the socket. From then on the server may
 * have the message. Its first read waits for `beforeData` (the caller records the steps); if
 * that fails, no byte is pushed and `onRefused` ends the conversation.
 */
class TrackedMessage extends Readable {
  private started = false;

  constructor(
    private readonly bytes: Buffer,
    private readonly beforeData: () => Promise<void>,
    private readonly onWritten: () => void,
    private readonly onRefused: (err: unknown) => void,
  ) {
    super();
  }

  override _read(): void {
    if (this.started) return;
    this.started = true;
    this.beforeData().then(() => {
      this.push(this.bytes);
      this.push(null);
    }, this.onRefused);
  }

  override pipe<T extends NodeJS.WritableStream>(destination: T, options?: { end?: boolean }): T {
    (destination as unknown as Writable).once('end', this.onWritten);
    return super.pipe(destination, options);
  }
}

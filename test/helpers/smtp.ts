import type { AddressInfo } from 'node:net';
import { simpleParser, type HeaderValue } from 'mailparser';
import { SMTPServer, type SMTPServerSession } from 'smtp-server';

/** A message whose data reached the sink, raw and parsed. */
export interface SinkMessage {
  raw: Buffer;
  envelope: { from: string; to: string[] };
  messageId: string | undefined;
  subject: string | undefined;
  /** The addresses of the To header. */
  to: string[];
  text: string | undefined;
  /** Parsed headers, lower-case names (`auto-submitted`, `message-id`, ...). */
  headers: Map<string, HeaderValue>;
  attachments: { filename: string | undefined; contentType: string; content: Buffer }[];
}

/** Where the conversation is: before the greeting, at MAIL FROM, at each RCPT TO, or with the whole message received (before the reply). */
export type SinkStep = 'connect' | 'mail' | 'rcpt' | 'data';

export interface SinkEvent {
  step: SinkStep;
  /** The envelope sender ('' before MAIL FROM). */
  from: string;
  /** At `rcpt` the recipient asked for; at `data` every accepted recipient; else []. */
  to: string[];
  /** How many times this step was reached for these recipients since the sink started, this time included (1 = the first). */
  nth: number;
  /** At `data`: the message received. */
  message?: SinkMessage;
}

/**
 * What the sink answers: accept (the default), a reply with this code (4xx or 5xx), `drop`: the
 * connection is cut without a reply (at `data`: after the whole message arrived), or `stall`: no
 * answer ever, the connection held open until the client goes (so a test can kill it there).
 */
export type SinkAnswer = 'accept' | 'drop' | 'stall' | { code: number; text?: string };

export type SinkProgram = (event: SinkEvent) => SinkAnswer | undefined;

export interface SmtpSink {
  /** `smtp://127.0.0.1:<port>` (with the credentials when the sink asks for them). */
  url: string;
  port: number;
  /** Every message the sink accepted (a 250 after the data), in order. */
  messages: SinkMessage[];
  /** Every message whose data arrived, whatever the answer (accepted, refused, dropped). */
  received: SinkMessage[];
  /** Sets how the sink answers from now on; null: accept everything. */
  program(fn: SinkProgram | null): void;
  /** Accepted messages addressed (envelope) to `address`. */
  messagesTo(address: string): SinkMessage[];
  close(): Promise<void>;
}

/**
 * A program answering `answer` at `step` (for `to` only, when given) the first `times` times it
 * is reached there (all the time without `times`), and accepting everything else.
 */
export function answerAt(step: SinkStep, answer: SinkAnswer, opts: { times?: number; to?: string } = {}): SinkProgram {
  return (e) => {
    if (e.step !== step) return undefined;
    if (opts.to && !e.to.includes(opts.to.toLowerCase())) return undefined;
    if (opts.times !== undefined && e.nth > opts.times) return undefined;
    return answer;
  };
}

/**
 * A real SMTP server on loopback (the `smtp-server` package) for tests: records what it receives,
 * parsed with mailparser, and answers as programmed. No TLS; with `auth`, AUTH PLAIN/LOGIN
 * (in the clear, loopback only) with these credentials is required.
 */
export async function startSmtpSink(opts: { auth?: { user: string; pass: string } } = {}): Promise<SmtpSink> {
  const messages: SinkMessage[] = [];
  const received: SinkMessage[] = [];
  const seen = new Map<string, number>();
  let programme: SinkProgram | null = null;

  const ask = (step: SinkStep, session: SMTPServerSession, to: string[], message?: SinkMessage): SinkAnswer => {
    const key = `${step}|${[...to].sort().join(',')}`;
    const nth = (seen.get(key) ?? 0) + 1;
    seen.set(key, nth);
    const from = session.envelope?.mailFrom ? session.envelope.mailFrom.address.toLowerCase() : '';
    return programme?.({ step, from, to, nth, message }) ?? 'accept';
  };
  const drop = (session: SMTPServerSession) => {
    for (const c of server.connections) if (c.session.id === session.id) c._socket.destroy();
  };
  /** Answers through the handler's callback: nothing for accept, an error carrying the code for a refusal; a drop never answers. */
  const answer = (a: SinkAnswer, session: SMTPServerSession, callback: (err?: Error | null) => void) => {
    if (a === 'accept') return callback();
    if (a === 'drop') return drop(session);
    if (a === 'stall') return;
    const err = Object.assign(new Error(a.text ?? (a.code >= 500 ? 'Refused by the test sink' : 'Try again later')), { responseCode: a.code });
    callback(err);
  };

  const server = new SMTPServer({
    authOptional: !opts.auth,
    allowInsecureAuth: true,
    disabledCommands: opts.auth ? ['STARTTLS'] : ['AUTH', 'STARTTLS'],
    logger: false,
    onAuth(auth, _session, callback) {
      if (auth.username === opts.auth?.user && auth.password === opts.auth?.pass) return callback(null, { user: auth.username });
      callback(Object.assign(new Error('Invalid username or password'), { responseCode: 535 }));
    },
    onConnect(session, callback) {
      answer(ask('connect', session, []), session, callback);
    },
    onMailFrom(_address, session, callback) {
      answer(ask('mail', session, []), session, callback);
    },
    onRcptTo(address, session, callback) {
      answer(ask('rcpt', session, [address.address.toLowerCase()]), session, callback);
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        const envelope = {
          from: session.envelope.mailFrom ? session.envelope.mailFrom.address.toLowerCase() : '',
          to: session.envelope.rcptTo.map((r) => r.address.toLowerCase()),
        };
        parse(Buffer.concat(chunks), envelope).then(
          (message) => {
            received.push(message);
            const a = ask('data', session, envelope.to, message);
            if (a === 'accept') messages.push(message);
            answer(a, session, callback);
          },
          (err: Error) => callback(err),
        );
      });
    },
  });
  server.on('error', () => undefined); // a dropped connection is what some tests ask for
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.server.address() as AddressInfo).port;
  const credentials = opts.auth ? `${encodeURIComponent(opts.auth.user)}:${encodeURIComponent(opts.auth.pass)}@` : '';
  return {
    url: `smtp://${credentials}127.0.0.1:${port}`,
    port,
    messages,
    received,
    program: (fn) => {
      programme = fn;
    },
    messagesTo: (address) => messages.filter((m) => m.envelope.to.includes(address.toLowerCase())),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

async function parse(raw: Buffer, envelope: SinkMessage['envelope']): Promise<SinkMessage> {
  const mail = await simpleParser(raw);
  const to = (Array.isArray(mail.to) ? mail.to : mail.to ? [mail.to] : []).flatMap((a) => a.value.map((v) => v.address ?? ''));
  return {
    raw,
    envelope,
    messageId: mail.messageId,
    subject: mail.subject,
    to,
    text: mail.text,
    headers: mail.headers,
    attachments: mail.attachments.map((a) => ({ filename: a.filename, contentType: a.contentType, content: a.content })),
  };
}

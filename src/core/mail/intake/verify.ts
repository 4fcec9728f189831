import { authenticate } from 'mailauth';
import type { RawMessage } from './raw.ts';

/**
 * Is the From address proven? DKIM checked here with `mailauth` (by the author of imapflow and
 * nodemailer): a signature that verifies and whose signing domain is aligned with the From
 * domain (relaxed, as DMARC aligns) proves that the From domain sent the message. SPF needs the
 * SMTP client's address, which a message read over IMAP does not carry (a Received line could be
 * written by anyone), so it is not evaluated. A receiving server named as trusted in the mailbox
 * settings may say the same in its own Authentication-Results header.
 */

/** DNS lookups as mailauth makes them (node's `dns.promises.resolve` has this shape); the caller at the edge passes one. */
export type DnsResolver = (name: string, rrtype: string) => Promise<string[][] | string[]>;

/** Answers nothing: without a resolver no signature can be checked, so nothing is proven by one. */
export const noDns: DnsResolver = async (name) => {
  throw Object.assign(new Error(`no DNS resolver: ${name} not looked up`), { code: 'ENOTFOUND' });
};

export interface Verification {
  proven: boolean;
  /** What was found, for the intake log: `dkim=pass (d=acme.test) dmarc=pass`, `dkim=none dmarc=none`, ... */
  verdict: string;
}

/** The From domain, or null when the message has not exactly one From header with one address. */
function fromDomain(raw: RawMessage, from: string): string | null {
  const values = raw.headers.get('from') ?? [];
  if (values.length !== 1 || (values[0]!.match(/@/g) ?? []).length !== 1) return null;
  return from.split('@')[1]?.toLowerCase() ?? null;
}

/** DMARC's relaxed alignment, by suffix: `mail.acme.test` signs for `acme.test` and the other way round. */
const aligned = (a: string, b: string) => a === b || a.endsWith(`.${b}`) || b.endsWith(`.${a}`);

/** Our own DKIM (and DMARC) check of the message. */
export async function verifyDkim(source: Buffer, raw: RawMessage, from: string, resolver: DnsResolver): Promise<Verification> {
  const domain = fromDomain(raw, from);
  if (!domain) return { proven: false, verdict: 'from=ambiguous' };
  try {
    const r = await authenticate(source, { resolver, disableArc: true, disableBimi: true, trustReceived: false, mta: 'intake' });
    const passing = r.dkim.results.filter((d) => d.status.result === 'pass');
    const good = passing.find((d) => d.status.aligned && aligned(d.signingDomain.toLowerCase(), domain));
    // mailauth judged the same single From address we act on
    const sameFrom = r.dkim.headerFrom.length === 1 && r.dkim.headerFrom[0]!.toLowerCase() === from.toLowerCase();
    const dkim = good
      ? `pass (d=${good.signingDomain})`
      : passing.length > 0
        ? `pass (d=${passing[0]!.signingDomain}, not aligned)`
        : (r.dkim.results[0]?.status.result ?? 'none');
    const dmarc = r.dmarc ? r.dmarc.status.result : 'none';
    return { proven: Boolean(good) && sameFrom, verdict: `dkim=${dkim} dmarc=${dmarc}` };
  } catch (err) {
    return { proven: false, verdict: `dkim=temperror (${err instanceof Error ? err.message.slice(0, 100) : 'error'})` };
  }
}

/** One Authentication-Results header: its authserv-id and `method=result` pairs with their properties. */
interface AuthResults {
  authservId: string;
  results: { method: string; result: string; props: Map<string, string> }[];
}

/** RFC 8601, leniently: comments dropped, `;`-separated; the first part is the authserv-id (and an optional version). */
export function parseAuthResults(value: string): AuthResults {
  const parts = value
    .replace(/\([^()]*\)/g, ' ')
    .split(';')
    .map((p) => p.trim());
  const authservId = (parts.shift() ?? '').split(/\s+/)[0]!.toLowerCase();
  const results = parts.flatMap((p) => {
    const [first, ...rest] = p.split(/\s+/);
    const m = /^([a-z0-9_-]+)=([a-z]+)$/i.exec(first ?? '');
    if (!m) return [];
    const props = new Map(
      rest
        .map((kv) => kv.split('='))
        .filter((kv) => kv.length === 2)
        .map(([k, v]) => [k!.toLowerCase(), v!.toLowerCase().replace(/^"|"$/g, '')]),
    );
    return [{ method: m[1]!.toLowerCase(), result: m[2]!.toLowerCase(), props }];
  });
  return { authservId, results };
}

/** The header block's fields in order, unfolded: which header sits above which matters here. */
function headerFields(source: Buffer): { name: string; value: string }[] {
  const text = source.toString('latin1');
  const end = /\r?\n\r?\n/.exec(text);
  const fields: { name: string; value: string }[] = [];
  for (const line of text.slice(0, end ? end.index : text.length).split(/\r?\n/)) {
    const last = fields.at(-1);
    if (/^[ \t]/.test(line) && last) last.value += ` ${line.trim()}`;
    else {
      const m = /^([!-9;-~]+)[ \t]*:(.*)$/.exec(line);
      if (m) fields.push({ name: m[1]!.toLowerCase(), value: m[2]!.trim() });
    }
  }
  return fields;
}

/**
 * The trusted receiving server's word: its Authentication-Results headers are the topmost ones
 * (a server adds its own above what it received, and RFC 8601 has it remove any other carrying
 * its authserv-id). Read: from the first Authentication-Results header, while they carry that
 * id, up to the next Received header or another server's; one further down (written by the
 * sender, or by a server before ours) is never read. Proven by `dmarc=pass` for the From domain,
 * or `dkim=pass` aligned with it.
 */
export function trustedAuthResults(source: Buffer, raw: RawMessage, from: string, authservId: string): Verification {
  const domain = fromDomain(raw, from);
  const id = authservId.toLowerCase();
  const top: AuthResults[] = [];
  for (const field of headerFields(source)) {
    if (field.name === 'received' && top.length > 0) break;
    if (field.name !== 'authentication-results') continue;
    const ar = parseAuthResults(field.value);
    if (ar.authservId !== id) break;
    top.push(ar);
  }
  if (top.length === 0) return { proven: false, verdict: `auth-results=none (${id})` };
  const results = top.flatMap((ar) => ar.results);
  const dmarc = results.find((r) => r.method === 'dmarc');
  const dkimGood = results.find((r) => r.method === 'dkim' && r.result === 'pass' && domain && aligned(r.props.get('header.d') ?? '', domain));
  const dmarcGood = dmarc?.result === 'pass' && domain !== null && (dmarc.props.get('header.from') ?? domain) === domain;
  const dkim = results.find((r) => r.method === 'dkim')?.result ?? 'none';
  return { proven: domain !== null && (dmarcGood || Boolean(dkimGood)), verdict: `${id}: dkim=${dkim} dmarc=${dmarc?.result ?? 'none'}` };
}

import { request } from 'node:https';
import { isIP } from 'node:net';
import { rootCertificates } from 'node:tls';
import { HostNotAllowed, type OutboundGuard } from '../../core/net/outbound.ts';

/**
 * The authorization server's only outbound request: a client's metadata document (its client_id
 * is an HTTPS URL). It goes through the one outbound guard (no private, link-local or metadata
 * address; loopback only with ALLOW_LOOPBACK_HOSTS=true) and connects to the exact address the
 * guard checked, so a DNS answer that changes in between cannot redirect it. HTTPS only, no
 * redirects, a timeout and a size limit; oidc-provider caches what it fetched.
 */
export interface GuardedFetchOptions {
  guard: OutboundGuard;
  timeoutMs: number;
  maxBytes: number;
  /** Extra certificate authorities to trust besides the system's (tests' self-signed loopback servers). */
  extraCa?: string;
}

export type FetchLike = (url: string | URL, init?: { headers?: HeadersInit; signal?: AbortSignal | null }) => Promise<Response>;

export function guardedFetch(o: GuardedFetchOptions): FetchLike {
  const ca = o.extraCa ? [...rootCertificates, o.extraCa] : undefined;
  return async (input, init = {}) => {
    const url = new URL(input);
    if (url.protocol !== 'https:') throw new HostNotAllowed(url.host, 'not https');
    const target = await o.guard.check(url.hostname);
    return new Promise<Response>((resolve, reject) => {
      const req = request(
        {
          host: target.address,
          port: url.port || 443,
          path: url.pathname + url.search,
          method: 'GET',
          // the certificate is checked against the name the client gave (or its IP literal)
          servername: target.servername && !isIP(target.servername) ? target.servername : undefined,
          headers: { host: url.host, accept: 'application/json', 'user-agent': 'worktracker-oauth' },
          timeout: o.timeoutMs,
          signal: init.signal ?? undefined,
          ...(ca ? { ca } : {}),
        },
        (res) => {
          const chunks: Buffer[] = [];
          let size = 0;
          res.on('data', (c: Buffer) => {
            size += c.length;
            if (size > o.maxBytes) req.destroy(new Error('client metadata document too large'));
            else chunks.push(c);
          });
          res.on('end', () => {
            const headers = new Headers();
            for (const [k, v] of Object.entries(res.headers)) if (typeof v === 'string') headers.set(k, v);
            resolve(new Response(Buffer.concat(chunks), { status: res.statusCode ?? 502, headers }));
          });
          res.on('error', reject);
        },
      );
      req.on('timeout', () => req.destroy(new Error('client metadata document fetch timed out')));
      req.on('error', reject);
      req.end();
    });
  };
}

import { forbidden } from '../errors.ts';

/**
 * Hosts a browser may reach a local server under: loopback, the configured HOST and the extra
 * names an operator allows (comma-separated); anything else is a DNS-rebinding attempt.
 */
export function allowedHosts(configuredHost: string, extra = ''): Set<string> {
  const more = extra.split(',').map((h) => h.trim().toLowerCase());
  return new Set(['localhost', '127.0.0.1', '[::1]', configuredHost.toLowerCase(), ...more].filter(Boolean));
}

function hostname(hostHeader: string): string {
  const h = hostHeader.trim().toLowerCase();
  if (h.startsWith('[')) return h.slice(0, h.indexOf(']') + 1);
  return h.split(':')[0]!;
}

/** Host and Origin must name this server (DNS-rebinding protection for a service on localhost). */
export function assertHostAndOrigin(hosts: Set<string>, host: string, origin: string): void {
  if (!hosts.has(hostname(host))) throw forbidden('host_not_allowed', undefined, 'This Host is not allowed; set MCP_ALLOWED_HOSTS.');
  if (origin) {
    let originHost = '';
    try {
      originHost = hostname(new URL(origin).host);
    } catch {
      /* malformed origin */
    }
    if (!hosts.has(originHost)) throw forbidden('origin_not_allowed', undefined, 'This Origin is not allowed.');
  }
}

/**
 * Whether a browser's form post was sent by this site's own page (a login form posted from
 * another site signs the victim in as the attacker: login CSRF). `Sec-Fetch-Site`, which every
 * current browser sends and no page can forge, decides when present: `same-origin`, or `none`
 * (the user's own navigation). Without it (an older browser), `Origin`, when sent, must name this
 * host (`host`: the request's Host as the app sees it); `Origin: null` is refused there (a
 * sandboxed or redirected post; note that under our `Referrer-Policy: no-referrer` browsers send
 * `null` for their own same-origin posts too, which is why Sec-Fetch-Site comes first). A request
 * with neither header is no browser's cross-site post (tools send none) and passes.
 */
export function isSameOriginPost(h: { host: string; origin?: string; secFetchSite?: string }): boolean {
  if (h.secFetchSite) return h.secFetchSite === 'same-origin' || h.secFetchSite === 'none';
  if (!h.origin) return true;
  try {
    return new URL(h.origin).host.toLowerCase() === h.host.trim().toLowerCase();
  } catch {
    return false;
  }
}

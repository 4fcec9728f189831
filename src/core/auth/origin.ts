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

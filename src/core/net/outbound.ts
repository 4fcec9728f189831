import { lookup } from 'node:dns/promises';
import ipaddr from 'ipaddr.js';
import type { Config } from '../../config.ts';
import { invalid } from '../errors.ts';

/**
 * The one guard every outbound connection to an address a user gave passes (a mailbox's IMAP
 * server; later a client's metadata document): the host is resolved, every address it resolves to
 * must be a public unicast one, and the connection goes to the exact address checked, so a DNS
 * answer that changes between the check and the connect cannot win.
 */
export interface OutboundGuard {
  /** The address to connect to; throws HostNotAllowed when the host is refused or does not resolve. */
  check(host: string): Promise<OutboundTarget>;
}

export interface OutboundTarget {
  /** The checked IP address, the one to connect to (never the name: it could resolve anew). */
  address: string;
  /** The name the user gave, for TLS SNI and certificate checks; undefined for an IP literal. */
  servername: string | undefined;
}

/** All addresses a host name resolves to (machinery: the system resolver; tests inject their own). */
export type ResolveHost = (name: string) => Promise<string[]>;

/** Refused: `detail` says why, for the server's log; callers answer something generic. */
export class HostNotAllowed extends Error {
  constructor(
    readonly host: string,
    readonly detail: string,
  ) {
    super(`host not allowed: ${detail}`);
    this.name = 'HostNotAllowed';
  }
}

/**
 * Names of cloud metadata services, refused before any lookup. Names under `.internal` are a
 * cloud's own (GCP's, AWS's `ec2.internal`) or a private network's (ICANN reserved it for that).
 */
const METADATA_NAMES = new Set(['metadata', 'metadata.goog', 'metadata.google.internal', 'instance-data', 'instance-data.ec2.internal']);

/**
 * Addresses ipaddr.js counts as unicast that are still internal: Azure's WireServer, and the
 * deprecated IPv4-compatible IPv6 block (`::a.b.c.d`), whose meaning varies by stack.
 */
const EXTRA_REFUSED = ['168.63.129.16/32', '::/96'].map((cidr) => ipaddr.parseCIDR(cidr));

/** The system resolver, as net.connect would use it (hosts file included), every answer. */
export const systemResolve: ResolveHost = async (name) => (await lookup(name, { all: true, verbatim: true })).map((a) => a.address);

/**
 * Why an address may not be connected to, or null when it may. Allowed: public unicast only
 * (ipaddr.js's `unicast`: not loopback, private, CGNAT, link-local, unique-local, multicast,
 * broadcast, unspecified, reserved or documentation, NAT64, 6to4, Teredo...), and loopback
 * (127.0.0.0/8, ::1) when `allowLoopback`. An IPv4-mapped IPv6 address is judged as its IPv4.
 */
export function addressRefusal(address: string, allowLoopback: boolean): string | null {
  if (!ipaddr.isValid(address)) return `not an IP address: ${address}`;
  const ip = ipaddr.process(address);
  const range = ip.range();
  if (range === 'loopback') return allowLoopback ? null : 'loopback (set ALLOW_LOOPBACK_HOSTS=true to allow it)';
  if (range !== 'unicast') return `${range} address ${ip.toString()}`;
  if (EXTRA_REFUSED.some(([net, bits]) => net.kind() === ip.kind() && ip.match(net, bits))) return `internal address ${ip.toString()}`;
  return null;
}

/** `[::1]` → `::1`; a trailing dot and letter case do not change a name. */
function normaliseHost(host: string): string {
  const bare = host.trim().replace(/^\[(.*)\]$/, '$1');
  return ipaddr.isValid(bare) ? bare : bare.toLowerCase().replace(/\.$/, '');
}

export function createOutboundGuard(opts: { allowLoopback: boolean; resolve?: ResolveHost }): OutboundGuard {
  const resolve = opts.resolve ?? systemResolve;
  return {
    async check(host) {
      const name = normaliseHost(host);
      // a numeric host in any form inet_aton takes (0x7f000001, 2130706433, 0177.0.0.1) is the address it means
      if (ipaddr.isValid(name)) {
        const refusal = addressRefusal(name, opts.allowLoopback);
        if (refusal) throw new HostNotAllowed(host, refusal);
        return { address: ipaddr.process(name).toString(), servername: undefined };
      }
      if (METADATA_NAMES.has(name) || name.endsWith('.internal')) throw new HostNotAllowed(host, `metadata or internal name ${name}`);
      let addresses: string[];
      try {
        addresses = await resolve(name);
      } catch (err) {
        throw new HostNotAllowed(host, `does not resolve: ${(err as { code?: string }).code ?? (err as Error).message}`);
      }
      if (addresses.length === 0) throw new HostNotAllowed(host, 'does not resolve');
      // every answer must pass: a name with one public and one private address is refused
      for (const address of addresses) {
        const refusal = addressRefusal(address, opts.allowLoopback);
        if (refusal) throw new HostNotAllowed(host, `resolves to ${refusal}`);
      }
      return { address: ipaddr.process(addresses[0]!).toString(), servername: name };
    },
  };
}

/** The guard as the environment configures it: loopback allowed by ALLOW_LOOPBACK_HOSTS, by default only on the embedded default. */
export function outboundGuardFromConfig(config: Pick<Config, 'ALLOW_LOOPBACK_HOSTS' | 'DATABASE_URL'>, resolve?: ResolveHost): OutboundGuard {
  const allowLoopback = config.ALLOW_LOOPBACK_HOSTS === undefined ? !config.DATABASE_URL : config.ALLOW_LOOPBACK_HOSTS === 'true';
  return createOutboundGuard({ allowLoopback, resolve });
}

/**
 * The write-time check of a host a user gives (400 `host_not_allowed` on `field`). One reason
 * whatever the cause, so the answer tells nothing about the internal network (which names
 * resolve, which ranges exist); the cause stays in the detail the caller may log.
 */
export async function requireAllowedHost(guard: OutboundGuard, host: string, field: string): Promise<void> {
  try {
    await guard.check(host);
  } catch (err) {
    if (!(err instanceof HostNotAllowed)) throw err;
    throw invalid(
      'host_not_allowed',
      { field },
      'The host must be a public server name or address: loopback, private, link-local and metadata addresses are refused.',
    );
  }
}

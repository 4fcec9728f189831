import { describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.ts';
import { createOutboundGuard, HostNotAllowed, outboundGuardFromConfig, type ResolveHost } from '../src/core/net/outbound.ts';

// Issue 19, defect 8: the one guard of outbound connections to addresses users give. The rule
// alone, with the DNS answers injected (the system resolver is the machinery).

/** A resolver answering from a table; any other name does not resolve, as NXDOMAIN would. */
const resolver =
  (table: Record<string, string[]>): ResolveHost =>
  async (name) => {
    const answer = table[name];
    if (!answer) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${name}`), { code: 'ENOTFOUND' });
    return answer;
  };

const names = resolver({
  'imap.public.test': ['93.184.216.34', '2606:2800:220:1:248:1893:25c8:1946'],
  'imap.private.test': ['10.0.0.1'],
  'imap.mixed.test': ['93.184.216.34', '10.0.0.1'],
  'imap.mapped.test': ['::ffff:169.254.169.254'],
  localhost: ['127.0.0.1', '::1'],
});
const strict = createOutboundGuard({ allowLoopback: false, resolve: names });
const loopback = createOutboundGuard({ allowLoopback: true, resolve: names });

async function refusal(guard: typeof strict, host: string): Promise<string> {
  try {
    const target = await guard.check(host);
    return `allowed: ${target.address}`;
  } catch (err) {
    if (err instanceof HostNotAllowed) return `refused: ${err.detail}`;
    throw err;
  }
}

/** The hosts of the issue, and their cousins: every one is loopback, private, link-local or a metadata service. */
const LOOPBACK_FORMS = ['localhost', '127.0.0.1', '0x7f000001', '2130706433', '0177.0.0.1', '127.1', '[::1]', '::ffff:127.0.0.1', '[::ffff:7f00:1]'];
const INTERNAL = [
  '169.254.169.254', // AWS, GCP, Azure, OpenStack metadata
  'metadata.google.internal',
  'metadata.google.internal.',
  'METADATA.GOOG',
  'instance-data.ec2.internal',
  'anything.corp.internal',
  '[fd00:ec2::254]', // AWS metadata over IPv6 (unique local)
  '10.0.0.1',
  '172.16.5.4',
  '192.168.1.1',
  '0xa000001', // 10.0.0.1
  '100.64.0.1', // carrier-grade NAT
  '100.100.100.200', // Alibaba metadata (CGNAT range)
  '168.63.129.16', // Azure WireServer
  '169.254.170.2', // ECS task metadata
  '0.0.0.0',
  '0',
  '[::]',
  '255.255.255.255',
  '224.0.0.1',
  '[ff02::1]',
  '[fe80::1]',
  '[fc00::1]',
  '::ffff:10.0.0.1', // IPv4-mapped
  '::ffff:a9fe:a9fe', // IPv4-mapped 169.254.169.254
  '64:ff9b::a9fe:a9fe', // NAT64 of 169.254.169.254
  '2002:a9fe:a9fe::1', // 6to4 of 169.254.169.254
  '::a9fe:a9fe', // IPv4-compatible
  '192.0.2.1', // documentation
  '240.0.0.1', // reserved
  'imap.private.test',
  'imap.mixed.test',
  'imap.mapped.test',
  'imap.nowhere.test',
];

describe('the outbound guard', () => {
  it.each(LOOPBACK_FORMS)('refuses the loopback address %s without ALLOW_LOOPBACK_HOSTS', async (host) => {
    expect(await refusal(strict, host)).toMatch(/^refused: .*loopback/);
  });

  it.each(LOOPBACK_FORMS)('allows %s with ALLOW_LOOPBACK_HOSTS, as the numeric address it means', async (host) => {
    expect(await refusal(loopback, host)).toMatch(/^allowed: (127\.0\.0\.1|::1)$/);
  });

  it.each(INTERNAL)('refuses %s whatever ALLOW_LOOPBACK_HOSTS says', async (host) => {
    expect(await refusal(strict, host)).toMatch(/^refused: /);
    expect(await refusal(loopback, host)).toMatch(/^refused: /);
  });

  it('a name resolving to a private address is refused; so is one with any private answer among public ones', async () => {
    expect(await refusal(strict, 'imap.private.test')).toBe('refused: resolves to private address 10.0.0.1');
    expect(await refusal(strict, 'imap.mixed.test')).toBe('refused: resolves to private address 10.0.0.1');
  });

  it('a public name is allowed: the connection goes to the address checked, the name kept for TLS', async () => {
    expect(await strict.check('IMAP.Public.test.')).toEqual({ address: '93.184.216.34', servername: 'imap.public.test' });
    expect(await strict.check('93.184.216.34')).toEqual({ address: '93.184.216.34', servername: undefined });
    expect(await strict.check('[2606:4700:4700::1111]')).toEqual({ address: '2606:4700:4700::1111', servername: undefined });
  });

  it('metadata names are refused before any lookup', async () => {
    const asked: string[] = [];
    const guard = createOutboundGuard({ allowLoopback: true, resolve: async (n) => (asked.push(n), ['93.184.216.34']) });
    await expect(guard.check('metadata.google.internal')).rejects.toBeInstanceOf(HostNotAllowed);
    await expect(guard.check('metadata')).rejects.toBeInstanceOf(HostNotAllowed);
    expect(asked).toEqual([]);
  });

  it('ALLOW_LOOPBACK_HOSTS: on by default only for the embedded default (no DATABASE_URL); explicit values win', async () => {
    const allows = async (env: Record<string, string>) => (await refusal(outboundGuardFromConfig(loadConfig(env)), '127.0.0.1')).startsWith('allowed');
    const url = 'postgres://u:p@db.example.test/wt';
    expect(await allows({})).toBe(true);
    expect(await allows({ DATABASE_URL: url })).toBe(false);
    expect(await allows({ DATABASE_URL: url, ALLOW_LOOPBACK_HOSTS: 'true' })).toBe(true);
    expect(await allows({ ALLOW_LOOPBACK_HOSTS: 'false' })).toBe(false);
    expect(() => loadConfig({ ALLOW_LOOPBACK_HOSTS: 'yes' })).toThrow(/ALLOW_LOOPBACK_HOSTS/);
    // private addresses stay refused with it
    expect(await refusal(outboundGuardFromConfig(loadConfig({ ALLOW_LOOPBACK_HOSTS: 'true' })), '10.0.0.1')).toMatch(/^refused/);
  });
});

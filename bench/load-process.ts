import http from 'node:http';
import { performance } from 'node:perf_hooks';

/**
 * A closed-loop load generator with microsecond latency resolution (autocannon's histogram
 * keeps whole milliseconds, too coarse to compare sub-millisecond medians). Runs in its own
 * process; `connections` keep-alive clients each send the next request when the last one ends.
 * Usage: tsx bench/load-process.ts '<json options>'  → prints one JSON result line.
 */
interface Options {
  url: string;
  headers?: Record<string, string>;
  method?: string;
  body?: string;
  connections: number;
  durationMs: number;
  warmupMs: number;
  /** Requests per second per connection (open loop at a fixed pace); absent: closed loop, as fast as answers come. */
  ratePerConnection?: number;
  /**
   * Mixed load (replaces url/method/body): each request picks one entry by weight, against
   * `bases[connection % bases.length]` with `tokens[connection % tokens.length]`. `{marker}` in
   * a body becomes a string unique in the run; the markers answered 2xx are reported per entry,
   * so the caller can count them in the database.
   */
  mix?: { name: string; method: string; path: string; body?: string; weight: number }[];
  bases?: string[];
  tokens?: string[];
}

const opts = JSON.parse(process.argv[2]!) as Options;
const target = new URL(opts.url);
const agent = new http.Agent({ keepAlive: true, maxSockets: opts.connections });

interface Shot {
  url: URL;
  method: string;
  headers?: Record<string, string>;
  body?: string;
}

function once(shot: Shot = { url: target, method: opts.method ?? 'GET', headers: opts.headers, body: opts.body }): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: shot.url.hostname,
        port: shot.url.port,
        path: shot.url.pathname + shot.url.search,
        method: shot.method,
        headers: { ...shot.headers, ...(shot.body ? { 'content-type': 'application/json' } : {}) },
        agent,
      },
      (res) => {
        res.resume();
        res.once('end', () => resolve(res.statusCode ?? 0));
      },
    );
    req.once('error', reject);
    req.end(shot.body);
  });
}

const mix = opts.mix ?? [];
const totalWeight = mix.reduce((n, m) => n + m.weight, 0);
const acked: Record<string, string[]> = Object.fromEntries(mix.map((m) => [m.name, []]));
const unknown: Record<string, string[]> = Object.fromEntries(mix.map((m) => [m.name, []]));
const perName = new Map<string, number[]>();
let markers = 0;

/** One request of the mix for connection `c`; records its marker as acknowledged (2xx) or unknown (no answer). */
async function mixed(c: number, record: boolean): Promise<number> {
  let pick = Math.random() * totalWeight;
  const m = mix.find((x) => (pick -= x.weight) < 0) ?? mix[mix.length - 1]!;
  const marker = `${process.pid}-${c}-${++markers}`;
  const base = opts.bases![c % opts.bases!.length]!;
  const token = opts.tokens![c % opts.tokens!.length]!;
  const t0 = performance.now();
  try {
    const status = await once({
      url: new URL(m.path, base),
      method: m.method,
      headers: { authorization: `Bearer ${token}` },
      body: m.body?.replace('{marker}', marker),
    });
    if (m.body?.includes('{marker}') && status >= 200 && status < 300) acked[m.name]!.push(marker);
    if (record) (perName.get(m.name) ?? perName.set(m.name, []).get(m.name)!).push(performance.now() - t0);
    return status;
  } catch (err) {
    if (m.body?.includes('{marker}')) unknown[m.name]!.push(marker);
    throw err;
  }
}

const latencies: number[] = [];
let non2xx = 0;
let errors = 0;

const okStatuses = new Map<number, number>();

async function client(until: number, record: boolean, index: number) {
  const gap = opts.ratePerConnection ? 1000 / opts.ratePerConnection : 0;
  let next = performance.now() + (index / opts.connections) * gap;
  while (performance.now() < until) {
    if (gap) {
      const wait = next - performance.now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      next += gap;
    }
    const t0 = performance.now();
    try {
      const status = mix.length ? await mixed(index, record) : await once();
      if (record) {
        latencies.push(performance.now() - t0);
        okStatuses.set(status, (okStatuses.get(status) ?? 0) + 1);
        if (status < 200 || status >= 300) non2xx++;
      }
    } catch {
      if (record) errors++;
    }
  }
}

const warmEnd = performance.now() + opts.warmupMs;
await Promise.all(Array.from({ length: opts.connections }, (_, i) => client(warmEnd, false, i)));
const start = performance.now();
await Promise.all(Array.from({ length: opts.connections }, (_, i) => client(start + opts.durationMs, true, i)));
const elapsed = performance.now() - start;
latencies.sort((a, b) => a - b);
const pct = (p: number) => latencies[Math.min(latencies.length - 1, Math.floor((p / 100) * latencies.length))] ?? 0;
console.log(
  JSON.stringify({
    requests: latencies.length,
    rps: latencies.length / (elapsed / 1000),
    p50: pct(50),
    p90: pct(90),
    p99: pct(99),
    errors,
    non2xx,
    statuses: Object.fromEntries(okStatuses),
    ...(mix.length
      ? {
          acked,
          unknown,
          byName: Object.fromEntries(
            [...perName].map(([name, l]) => {
              l.sort((a, b) => a - b);
              return [name, { requests: l.length, p50: l[Math.floor(l.length / 2)] ?? 0, p99: l[Math.floor(l.length * 0.99)] ?? 0 }];
            }),
          ),
        }
      : {}),
  }),
);
agent.destroy();

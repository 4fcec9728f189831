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
}

const opts = JSON.parse(process.argv[2]!) as Options;
const target = new URL(opts.url);
const agent = new http.Agent({ keepAlive: true, maxSockets: opts.connections });

function once(): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: target.hostname,
        port: target.port,
        path: target.pathname + target.search,
        method: opts.method ?? 'GET',
        headers: { ...opts.headers, ...(opts.body ? { 'content-type': 'application/json' } : {}) },
        agent,
      },
      (res) => {
        res.resume();
        res.once('end', () => resolve(res.statusCode ?? 0));
      },
    );
    req.once('error', reject);
    req.end(opts.body);
  });
}

const latencies: number[] = [];
let non2xx = 0;
let errors = 0;

const okStatuses = new Map<number, number>();

async function client(until: number, record: boolean, offset: number) {
  const gap = opts.ratePerConnection ? 1000 / opts.ratePerConnection : 0;
  let next = performance.now() + offset * gap;
  while (performance.now() < until) {
    if (gap) {
      const wait = next - performance.now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      next += gap;
    }
    const t0 = performance.now();
    try {
      const status = await once();
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
await Promise.all(Array.from({ length: opts.connections }, (_, i) => client(warmEnd, false, i / opts.connections)));
const start = performance.now();
await Promise.all(Array.from({ length: opts.connections }, (_, i) => client(start + opts.durationMs, true, i / opts.connections)));
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
  }),
);
agent.destroy();

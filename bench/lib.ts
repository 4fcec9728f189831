import { spawn } from 'node:child_process';
import autocannon from 'autocannon';
import { cleanEnv } from '../test/helpers/spawn.ts';

export interface Measured {
  name: string;
  requests: number;
  rps: number;
  p50: number;
  p99: number;
  errors: number;
  non2xx: number;
  /** autocannon records whole milliseconds; the latency runner microseconds. */
  resolution?: 'ms' | 'us';
}

/** Runs autocannon against one URL (this process is the load generator; servers run in their own processes). */
export async function load(
  name: string,
  url: string,
  opts: { headers?: Record<string, string>; connections?: number; duration?: number; method?: 'GET' | 'POST'; body?: string } = {},
): Promise<Measured> {
  const r = await autocannon({
    url,
    connections: opts.connections ?? 10,
    duration: opts.duration ?? 5,
    headers: opts.headers,
    method: opts.method ?? 'GET',
    body: opts.body,
  });
  return {
    name,
    requests: r.requests.total,
    rps: r.requests.average,
    p50: r.latency.p50,
    p99: r.latency.p99,
    errors: r.errors,
    non2xx: r.non2xx,
    resolution: 'ms',
  };
}

export function table(rows: Measured[]): string {
  const head = ['scenario', 'req/s', 'p50 ms', 'p99 ms', 'requests', 'errors', 'non-2xx'];
  const body = rows.map((r) => [r.name, r.rps.toFixed(0), r.p50.toFixed(2), r.p99.toFixed(2), String(r.requests), String(r.errors), String(r.non2xx)]);
  const widths = head.map((h, i) => Math.max(h.length, ...body.map((b) => b[i]!.length)));
  const line = (cells: string[]) => cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ');
  return [line(head), line(widths.map((w) => '-'.repeat(w))), ...body.map(line)].join('\n');
}

export function ratio(a: Measured, b: Measured): string {
  const throughput = `throughput ${(a.rps / Math.max(b.rps, 1)).toFixed(2)}x`;
  if (a.resolution === 'ms' || b.resolution === 'ms') return `${a.name} vs ${b.name}: ${throughput} (latency in whole ms, no ratio)`;
  return `${a.name} vs ${b.name}: p50 ${(a.p50 / b.p50).toFixed(2)}x, p99 ${(a.p99 / b.p99).toFixed(2)}x, ${throughput}`;
}

/**
 * Latency at a fixed, modest concurrency from a separate process, with microsecond resolution:
 * what one caller waits, without the queueing that saturation adds.
 */
export async function latency(
  name: string,
  url: string,
  opts: {
    headers?: Record<string, string>;
    connections?: number;
    durationMs?: number;
    warmupMs?: number;
    method?: string;
    body?: string;
    ratePerConnection?: number;
  } = {},
): Promise<Measured & { statuses: Record<string, number> }> {
  const args = JSON.stringify({
    url,
    headers: opts.headers,
    method: opts.method,
    body: opts.body,
    connections: opts.connections ?? 1,
    durationMs: opts.durationMs ?? 4000,
    warmupMs: opts.warmupMs ?? 1000,
    ratePerConnection: opts.ratePerConnection,
  });
  const child = spawn('node', ['--import', 'tsx', 'bench/load-process.ts', args], { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  child.stdout.on('data', (d) => (out += d));
  await new Promise((resolve) => child.once('exit', resolve));
  const r = JSON.parse(out.trim().split('\n').pop()!) as Omit<Measured, 'name'> & { statuses: Record<string, number> };
  return { name, ...r, resolution: 'us' };
}

export interface MixEntry {
  name: string;
  method: 'GET' | 'POST';
  path: string;
  /** JSON; `{marker}` becomes a string unique in the run (see bench/load-process.ts). */
  body?: string;
  weight: number;
}

export interface MixedResult extends Measured {
  statuses: Record<string, number>;
  /** Per mix entry with a marker: the markers answered 2xx, and those that got no answer at all. */
  acked: Record<string, string[]>;
  unknown: Record<string, string[]>;
  byName: Record<string, { requests: number; p50: number; p99: number }>;
}

/** A closed-loop mixed read/write load from a separate process (bench/load-process.ts), spread over `bases` and `tokens`. */
export async function mixedLoad(
  name: string,
  opts: { bases: string[]; tokens: string[]; mix: MixEntry[]; connections: number; durationMs: number; warmupMs?: number },
): Promise<MixedResult> {
  const args = JSON.stringify({ url: opts.bases[0], ...opts, warmupMs: opts.warmupMs ?? 2000 });
  const child = spawn('node', ['--import', 'tsx', 'bench/load-process.ts', args], { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  child.stdout.on('data', (d) => (out += d));
  await new Promise((resolve) => child.once('exit', resolve));
  const r = JSON.parse(out.trim().split('\n').pop()!) as Omit<MixedResult, 'name'>;
  return { name, ...r, resolution: 'us' };
}

/**
 * The environment of a service process under bench: the per-token rate limits are set out of
 * reach, since the bench measures the service's speed and the load comes from a few tokens.
 */
export function serviceEnv(dbUrl: string, port: number): NodeJS.ProcessEnv {
  return cleanEnv({
    DATABASE_URL: dbUrl,
    PORT: String(port),
    WORKER: 'off',
    LOG_LEVEL: 'warn',
    RATE_LIMIT_READS_PER_MINUTE: '1000000',
    RATE_LIMIT_WRITES_PER_MINUTE: '1000000',
  });
}

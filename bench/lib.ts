import { spawn } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import os from 'node:os';
import autocannon from 'autocannon';
import { connect, type Db } from '../src/db/connect.ts';
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

/**
 * Runs `measure` while workspace `workspaceId`'s read mark moves as often as a loop can (every ~2 ms,
 * as a change to the workspace would move it): reads answered from memory while nothing changed
 * (src/core/reads/remembered.ts) are then read afresh on nearly every request.
 */
export async function withMovingReadMark<T>(sql: Db, workspaceId: string, measure: () => Promise<T>): Promise<T> {
  let moving = true;
  const bumps = (async () => {
    while (moving) {
      await sql`insert into read_marks (workspace_id, n) values (${workspaceId}, nextval('read_mark_seq'))
                on conflict (workspace_id) do update set n = excluded.n`;
      await new Promise((r) => setTimeout(r, 2));
    }
  })();
  try {
    return await measure();
  } finally {
    moving = false;
    await bumps;
  }
}

/** Statements as an operation sent them (see `captureStatements` in bench/explain.ts). */
export interface Statement {
  query: string;
  params: unknown[];
}

/**
 * "The same SQL run directly": `statements` in order over postgres.js (prepared, as the service
 * sends them), closed loop from `connections` workers for `durationMs` after `warmupMs`; one
 * sample per round of all statements, microsecond resolution. The limit an API read is compared
 * with (issue 25: the list through the API at most 1.2x its SQL).
 */
export async function sqlLatency(
  name: string,
  dbUrl: string,
  statements: Statement[],
  opts: { connections?: number; durationMs?: number; warmupMs?: number } = {},
): Promise<Measured> {
  const connections = opts.connections ?? 1;
  const sql = connect(dbUrl, { max: connections });
  const samples: number[] = [];
  try {
    const start = performance.now();
    const warm = start + (opts.warmupMs ?? 1000);
    const end = warm + (opts.durationMs ?? 4000);
    const worker = async () => {
      while (performance.now() < end) {
        const t = performance.now();
        for (const s of statements) await sql.unsafe(s.query, s.params as never[], { prepare: true });
        if (t >= warm) samples.push(performance.now() - t);
      }
    };
    await Promise.all(Array.from({ length: connections }, worker));
  } finally {
    await sql.end();
  }
  samples.sort((a, b) => a - b);
  const at = (q: number) => samples[Math.min(samples.length - 1, Math.floor(q * samples.length))] ?? 0;
  const seconds = (opts.durationMs ?? 4000) / 1000;
  return { name, requests: samples.length, rps: samples.length / seconds, p50: at(0.5), p99: at(0.99), errors: 0, non2xx: 0, resolution: 'us' };
}

/** How every target line begins (`target`); run.ts gathers such lines of every scenario at the end. */
export const TARGET_PREFIX = 'target ';

/**
 * One target line, in one shape for every scenario: what, the measured value, the limit, their ratio
 * and OK or MISSED. `limit` is a number of the same unit as `value` (`ms`, `s`, `x` for a ratio to a
 * limit measured in the same run); `atLeast` for targets to reach rather than stay under.
 */
export function target(t: {
  issue: number;
  name: string;
  value: number;
  limit: number;
  unit: 'ms' | 's' | 'x' | '%';
  atLeast?: boolean;
  /** The lowest value this machine allows, measured in the same run (`of`: what it is): printed beside the limit. */
  floor?: { value: number; of: string };
}): string {
  const ok = t.atLeast ? t.value >= t.limit : t.value <= t.limit;
  const digits = t.unit === 'x' ? 2 : 1;
  const shown = (v: number) => `${v.toFixed(digits)}${t.unit === 'x' ? 'x' : ` ${t.unit}`}`;
  const ratio = t.unit === 'x' ? '' : `, ${(t.value / t.limit).toFixed(2)} of the limit`;
  const floor = t.floor ? `; the floor here ${shown(t.floor.value)}: ${t.floor.of}` : '';
  return `${TARGET_PREFIX}(issue ${t.issue}) ${t.name}: ${shown(t.value)} (${t.atLeast ? 'at least' : 'at most'} ${shown(t.limit)}${ratio}${floor}) ${ok ? 'OK' : 'MISSED'}`;
}

/** Busy and total jiffies of all CPUs so far (/proc/stat's first line). */
async function cpuJiffies(): Promise<{ busy: number; total: number }> {
  const line = (await readFile('/proc/stat', 'utf8')).split('\n')[0]!;
  const [user, nice, system, idle, iowait, irq, softirq, steal] = line.split(/\s+/).slice(1).map(Number) as number[];
  const busy = user! + nice! + system! + irq! + softirq! + steal!;
  return { busy, total: busy + idle! + iowait! };
}

/**
 * Waits until the machine is quiet before a scenario: the share of CPU time busy over the last
 * `windowS` seconds at most `busyAtMost`, checked each second, for at most `maxS` seconds (then it
 * goes on and says so). The targets of issue 25 are for a quiet machine; a scenario run while
 * PostgreSQL is still vacuuming after the 200-client mix, or while another process holds a core,
 * measures that instead. Returns a line for the report: how long it waited and how busy it was.
 */
export async function settle(opts: { busyAtMost?: number; windowS?: number; maxS?: number } = {}): Promise<string> {
  const busyAtMost = opts.busyAtMost ?? 0.15;
  const windowS = opts.windowS ?? 3;
  const maxS = opts.maxS ?? 120;
  const began = performance.now();
  const samples = [await cpuJiffies()];
  let busy = 1;
  while ((performance.now() - began) / 1000 < maxS) {
    await new Promise((r) => setTimeout(r, 1000));
    samples.push(await cpuJiffies());
    if (samples.length <= windowS) continue;
    const from = samples[samples.length - 1 - windowS]!;
    const to = samples[samples.length - 1]!;
    busy = (to.busy - from.busy) / Math.max(1, to.total - from.total);
    if (busy <= busyAtMost) break;
  }
  const waited = (performance.now() - began) / 1000;
  const quiet = busy <= busyAtMost;
  return `started after ${waited.toFixed(0)} s ${quiet ? 'of waiting for a quiet machine' : `without a quiet machine (waited the most, ${maxS} s)`}: CPU ${(busy * 100).toFixed(0)} % busy over ${windowS} s, load average ${os
    .loadavg()
    .map((l) => l.toFixed(1))
    .join(' ')}`;
}

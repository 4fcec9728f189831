import os from 'node:os';
import { getBoard } from '../../src/core/board/board.ts';
import { getMyWork } from '../../src/core/board/my.ts';
import type { Ctx } from '../../src/core/ctx.ts';
import { runOp } from '../../src/core/operation.ts';
import { encodeUpdatedCursor } from '../../src/core/tickets/cursor.ts';
import { listTickets } from '../../src/core/tickets/list.ts';
import { connect, ensureDatabase, type Db } from '../../src/db/connect.ts';
import { migrate } from '../../src/db/migrate.ts';
import { spawnGroup, waitUntil, type Spawned } from '../../test/helpers/spawn.ts';
import { freePort, withDatabase } from '../../test/setup/global.ts';
import { explainOperation, planCache } from '../explain.ts';
import { latency, serviceEnv, target, withMovingReadMark, type Measured } from '../lib.ts';
import type { Scenario } from '../scenario.ts';
import { growBigWorkspace, seedBigWorkspace, type BigWorkspace } from '../seed.ts';

/**
 * Issue 25, "Scale": the list's first page, a deep page, the board (owner and member) and /my at
 * 1,000,000 tickets within 1.2x of the same at 100,000 (BENCH_SCALE_FROM, BENCH_SCALE_TO).
 *
 * The workspace is seeded at the small size in a database of its own, that database is copied
 * (CREATE DATABASE ... TEMPLATE) and the copy grown to the large size: the same workspace, ids,
 * tokens and first pages (grown tickets are older than the rest, bench/seed.ts), and the same
 * cursor is the same number of rows deep in both. One web process serves each database, and the
 * two are measured in alternating order, case by case and round after round
 * (BENCH_SCALE_ROUNDS, 5), so drift in the machine's load falls on both sides; the verdict is the
 * median of the rounds' own large/small ratios (each round's pair measured back to back). Beside the times,
 * the shared buffers each read touches (EXPLAIN ANALYZE BUFFERS of the operation's main
 * statement) at both sizes: the same comparison without the noise, and whether that statement
 * keeps its cached plan at both sizes (a generic plan costed above the custom ones is never taken:
 * the statement is planned on every call, a cost the buffers do not show). Both databases are
 * dropped at the end.
 */
export const scale: Scenario = {
  name: 'scale',
  async run(env) {
    const from = Number(process.env.BENCH_SCALE_FROM ?? 100_000);
    const to = Number(process.env.BENCH_SCALE_TO ?? 1_000_000);
    const rounds = Number(process.env.BENCH_SCALE_ROUNDS ?? 5);
    const connections = Number(process.env.BENCH_SCALE_CONNECTIONS ?? 1);
    const adminUrl = withDatabase(env.dbUrl, 'postgres');
    const base = new URL(env.dbUrl).pathname.slice(1);
    const names = { small: `${base}_scale_small`, large: `${base}_scale_large` };
    const urls = { small: withDatabase(env.dbUrl, names.small), large: withDatabase(env.dbUrl, names.large) };
    const admin = connect(adminUrl, { max: 1 });
    const procs: Spawned[] = [];
    const notes: string[] = [];
    const rows: Measured[] = [];
    try {
      // the small size, in its own database
      await ensureDatabase(adminUrl, names.small);
      let big: BigWorkspace;
      const small = connect(urls.small, { max: 4 });
      try {
        await migrate(small, urls.small);
        big = await timed(notes, `seeded ${from.toLocaleString('en')} tickets`, () => seedBigWorkspace(small, from));
        await timed(notes, `vacuum analyze at ${from.toLocaleString('en')}`, () => small`vacuum analyze`);
      } finally {
        await small.end();
      }
      // the same workspace, copied and grown
      await timed(notes, 'copied the database', () => admin.unsafe(`create database ${names.large} template ${names.small}`));
      const large = connect(urls.large, { max: 4 });
      try {
        await timed(notes, `grew the copy to ${to.toLocaleString('en')} tickets`, () => growBigWorkspace(large, big, to));
        await timed(notes, `vacuum analyze at ${to.toLocaleString('en')}`, () => large`vacuum analyze`);
        const sizes = await admin<{ db: string; mb: number }[]>`
          select datname as db, round(pg_database_size(datname) / 1048576.0)::int as mb from pg_database where datname in ${admin([names.small, names.large])}`;
        notes.push(`database sizes: ${sizes.map((s) => `${s.db} ${s.mb} MB`).join(', ')}`);
      } finally {
        await large.end();
      }

      const ports = { small: await freePort(), large: await freePort() };
      for (const side of ['small', 'large'] as const) {
        const p = spawnGroup('node', ['--import', 'tsx', 'src/main.ts', 'web'], serviceEnv(urls[side], ports[side]));
        procs.push(p);
        // a loaded machine takes more than 30 s to start a server under tsx
        await waitUntil(`web process over ${names[side]}: ${p.output()}`, async () => (await fetch(`http://127.0.0.1:${ports[side]}/readyz`)).ok, 120_000);
      }

      // a cursor the same number of rows deep at both sizes (the grown tickets come after it)
      const deepOffset = Math.min(50_000, Math.floor(from * 0.6) - 1000);
      const cursor = await deepCursor(urls.small, big, deepOffset);
      const cases: Case[] = [
        { name: 'list, first page', path: '/tickets', token: big.restrictedToken, op: (ctx) => runOp(listTickets, ctx, {}) },
        {
          name: `list, after ${deepOffset.toLocaleString('en')} rows`,
          path: `/tickets?cursor=${cursor}`,
          token: big.restrictedToken,
          op: (ctx) => runOp(listTickets, ctx, { cursor }),
        },
        { name: 'GET /board, owner (every ticket)', path: '/board', token: big.ownerToken, op: (ctx) => runOp(getBoard, ctx, {}) },
        { name: 'GET /board, member token on 6 projects', path: '/board', token: big.restrictedToken, op: (ctx) => runOp(getBoard, ctx, {}) },
        { name: 'GET /my, busy member (every 50th ticket assigned)', path: '/my', token: big.busyToken, op: (ctx) => runOp(getMyWork, ctx, {}) },
      ];
      // an unchanged first list page, board or /my is answered from the web process's memory (src/core/reads/remembered.ts;
      // a page after a cursor never is): the same reads with the workspace's read mark moving meanwhile are read afresh
      for (const c of [...cases]) cases.push({ ...c, name: `${c.name}, read afresh`, afresh: true });

      const load = [os.loadavg()[0]!];
      const p50s = new Map<string, { small: number[]; large: number[]; smallP99: number[]; largeP99: number[] }>();
      // a connection per size, for moving its read mark during the "read afresh" cases
      const sides = { small: connect(urls.small, { max: 1 }), large: connect(urls.large, { max: 1 }) };
      for (let r = 0; r < rounds; r++) {
        for (const [i, c] of cases.entries()) {
          const order = (r + i) % 2 === 0 ? (['small', 'large'] as const) : (['large', 'small'] as const);
          for (const side of order) {
            const measure = () =>
              latency(c.name, `http://127.0.0.1:${ports[side]}/api/w/${big.slug}${c.path}`, {
                headers: { authorization: `Bearer ${c.token}` },
                connections,
                durationMs: 3000,
                warmupMs: 500,
              });
            const m = c.afresh ? await withMovingReadMark(sides[side], big.workspaceId, measure) : await measure();
            if (m.non2xx || m.errors) throw new Error(`${c.name} at the ${side} size: ${m.non2xx} non-2xx, ${m.errors} errors`);
            const e = p50s.get(c.name) ?? { small: [], large: [], smallP99: [], largeP99: [] };
            e[side].push(m.p50);
            e[side === 'small' ? 'smallP99' : 'largeP99'].push(m.p99);
            p50s.set(c.name, e);
          }
        }
        load.push(os.loadavg()[0]!);
      }
      await Promise.all([sides.small.end(), sides.large.end()]);

      const sizes = { small: from.toLocaleString('en'), large: to.toLocaleString('en') };
      notes.push(
        `${rounds} interleaved rounds, ${connections} connection(s), 3 s per case and size; load average (1 min) ${load.map((l) => l.toFixed(1)).join(' → ')}; ${os.cpus().length} cores`,
      );
      for (const c of cases) {
        const e = p50s.get(c.name)!;
        // each round measures both sizes back to back: the median of the rounds' own ratios leaves out
        // the drift of a shared machine between rounds (the ratio of the two medians is printed beside it)
        const ratio = median(e.large.map((l, k) => l / e.small[k]!));
        const ofMedians = median(e.large) / median(e.small);
        for (const side of ['small', 'large'] as const) {
          rows.push({
            name: `${c.name} at ${sizes[side]}`,
            requests: 0,
            rps: 0,
            p50: median(e[side]),
            p99: median(side === 'small' ? e.smallP99 : e.largeP99),
            errors: 0,
            non2xx: 0,
            resolution: 'us',
          });
        }
        const verdict = target({ issue: 25, name: `${c.name}, p50 at ${sizes.large} / at ${sizes.small} tickets`, value: ratio, limit: 1.2, unit: 'x' });
        // the statement is the same read afresh or not: its buffers once
        if (c.afresh) {
          notes.push(
            `${c.name}: p50 ${median(e.small).toFixed(2)} → ${median(e.large).toFixed(2)} ms (${ofMedians.toFixed(2)}x; per round ${perRound(e)}, median ${ratio.toFixed(2)}x)`,
            verdict,
          );
          continue;
        }
        const smallPlan = await warmExplain(urls.small, c);
        const largePlan = await warmExplain(urls.large, c);
        const [bs, bl] = [buffers(smallPlan), buffers(largePlan)];
        // the other way a read grows with the table: its cached plan costed above a custom one, so planned on every call
        const [ps, pl] = [await planCache(urls.small, c.token, c.op), await planCache(urls.large, c.token, c.op)];
        const plans = (x: typeof ps) => `${x.generic} generic / ${x.custom} custom`;
        notes.push(
          `${c.name}: p50 ${median(e.small).toFixed(2)} → ${median(e.large).toFixed(2)} ms (${ofMedians.toFixed(2)}x; per round ${perRound(e)}, median ${ratio.toFixed(2)}x); ` +
            `main statement's shared buffers ${bs} → ${bl} (${(bl / Math.max(bs, 1)).toFixed(2)}x), execution ${execution(smallPlan)} → ${execution(largePlan)} ms; ` +
            `plans over 10 calls ${plans(ps)} → ${plans(pl)}, planning it afresh ${ps.planningMs.toFixed(2)} → ${pl.planningMs.toFixed(2)} ms`,
          verdict,
        );
        // the evidence when a read grows with the tickets: both plans
        if (bl > bs * 1.2)
          notes.push(`EXPLAIN (ANALYZE, BUFFERS) of ${c.name} at ${sizes.small}:\n${indent(smallPlan)}\n  and at ${sizes.large}:\n${indent(largePlan)}`);
      }
      return { rows, notes };
    } finally {
      for (const p of procs) await p.stop();
      for (const name of Object.values(names)) await admin.unsafe(`drop database if exists ${name} with (force)`).catch(() => {});
      await admin.end();
    }
  },
};

interface Case {
  name: string;
  path: string;
  token: string;
  op: (ctx: Ctx) => Promise<unknown>;
  /** Measured while the workspace's read mark moves (as bench/scenarios/board.ts does): no answer from memory. */
  afresh?: boolean;
}

const perRound = (e: { small: number[]; large: number[] }) => e.large.map((l, k) => (l / e.small[k]!).toFixed(2)).join(', ');

async function timed<T>(notes: string[], what: string, fn: () => Promise<T>): Promise<T> {
  const began = Date.now();
  const out = await fn();
  const line = `${what} in ${((Date.now() - began) / 1000).toFixed(1)} s (load average ${os.loadavg()[0]!.toFixed(1)})`;
  console.error(`scale: ${line}`);
  notes.push(line);
  return out;
}

async function deepCursor(url: string, big: BigWorkspace, offset: number): Promise<string> {
  const sql: Db = connect(url, { max: 1 });
  try {
    const [deep] = await sql<{ at: string; id: string }[]>`
      select to_char(updated_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US') as at, id from tickets
      where project_id = any(${big.restrictedProjectIds}::uuid[]) and not archived
      order by updated_at desc, id desc offset ${offset - 1} limit 1`;
    return encodeUpdatedCursor({ at: deep!.at, id: deep!.id });
  } finally {
    await sql.end();
  }
}

/** The second of two EXPLAIN ANALYZE runs (the first warms the caches). */
async function warmExplain(url: string, c: Case): Promise<string> {
  await explainOperation(url, c.token, c.op);
  return explainOperation(url, c.token, c.op);
}

/** Shared buffers (hit + read) of the plan's top node, which include every node below it. */
function buffers(plan: string): number {
  const line = plan.split('\n').find((l) => /^\s*Buffers: shared/.test(l)) ?? '';
  const count = (kind: string) => Number(new RegExp(`${kind}=(\\d+)`).exec(line)?.[1] ?? 0);
  return count('hit') + count('read');
}

function execution(plan: string): string {
  return /Execution Time: ([\d.]+) ms/.exec(plan)?.[1] ?? '?';
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

const indent = (s: string) =>
  s
    .split('\n')
    .map((l) => `    ${l}`)
    .join('\n');

import type { Scenario } from '../scenario.ts';
import { latency, load, ratio, target, type Measured } from '../lib.ts';
import type { Db } from '../../src/db/connect.ts';

/** Rounds of the one-connection pair, in alternating order, so both sides meet the same machine load. */
const ROUNDS = 3;

/**
 * Issues 2 and 25: authenticated GET /workflow against a bare Koa handler returning the same JSON.
 * Aim: p50 within 1.5x of the bare handler at one connection, the per-token rate limit included
 * (issue 25: it counts in memory and settles about once a second, so a read writes nothing).
 * Measured twice: one caller at a time (service latency, microsecond resolution; ROUNDS rounds
 * alternating which side goes first, the target on the median of the rounds' ratios) and saturated
 * with 10 connections (autocannon). Statements on `rate_limits` are counted by a statement
 * trigger for the duration of the scenario.
 */
export const workflow: Scenario = {
  name: 'workflow',
  async run(env) {
    const url = `${env.api}/api/w/${env.demo.slug}/workflow`;
    const headers = { authorization: `Bearer ${env.demo.people.member.token}` };
    const writes = await countLimitWrites(env.sql);
    try {
      const pairs: { auth: Measured; bare: Measured }[] = [];
      let auth1Requests = 0;
      for (let r = 0; r < ROUNDS; r++) {
        const measure = {
          auth: () => latency(`GET /workflow (token), 1 conn, round ${r + 1}`, url, { headers, durationMs: 2000 }),
          bare: () => latency(`bare Koa, same JSON, 1 conn, round ${r + 1}`, `${env.bare}/`, { durationMs: 2000 }),
        };
        const first = r % 2 === 0 ? 'auth' : 'bare';
        const a = await measure[first]();
        const b = await measure[first === 'auth' ? 'bare' : 'auth']();
        const pair = first === 'auth' ? { auth: a, bare: b } : { auth: b, bare: a };
        auth1Requests += pair.auth.requests;
        pairs.push(pair);
      }
      const auth1Writes = await writes.count();
      const auth10 = await load('GET /workflow (token), 10 conn', url, { headers });
      const auth10Writes = (await writes.count()) - auth1Writes;
      const bare10 = await load('bare Koa, same JSON, 10 conn', `${env.bare}/`);
      const ratios = pairs.map((p) => p.auth.p50 / p.bare.p50);
      const median = [...ratios].sort((x, y) => x - y)[Math.floor(ratios.length / 2)]!;
      return {
        rows: [...pairs.flatMap((p) => [p.auth, p.bare]), auth10, bare10],
        notes: [
          target({
            issue: 25,
            name: `GET /workflow (token) / bare Koa, 1 conn, p50 (median of ${ROUNDS} alternating rounds)`,
            value: median,
            limit: 1.5,
            unit: 'x',
          }),
          `per round: ${pairs.map((p, i) => `${ratio(p.auth, p.bare)} (${ratios[i]!.toFixed(2)}x)`).join('; ')}`,
          ratio(auth10, bare10),
          `rate_limits statements: ${auth1Writes} for about ${auth1Requests} requests at 1 conn, ${auth10Writes} for about ${auth10.requests} requests at 10 conn (warm-up included)`,
        ],
      };
    } finally {
      await writes.drop();
    }
  },
};

/** A statement-level trigger that bumps a sequence for every insert (upsert) on rate_limits. */
async function countLimitWrites(sql: Db) {
  await sql`create sequence if not exists bench_limit_writes minvalue 0 start 0`;
  await sql`create or replace function bench_count_limit_write() returns trigger language plpgsql as $$
    begin perform nextval('bench_limit_writes'); return null; end $$`;
  await sql`create or replace trigger bench_count_limit_writes after insert on rate_limits for each statement execute function bench_count_limit_write()`;
  return {
    count: async () => {
      const [row] = await sql<[{ n: string; called: boolean }]>`select last_value::text as n, is_called as called from bench_limit_writes`;
      return row.called ? Number(row.n) + 1 : 0;
    },
    drop: async () => {
      await sql`drop trigger if exists bench_count_limit_writes on rate_limits`;
      await sql`drop function if exists bench_count_limit_write()`;
      await sql`drop sequence if exists bench_limit_writes`;
    },
  };
}

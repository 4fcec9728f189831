import type { Scenario } from '../scenario.ts';
import { latency, load, ratio, type Measured } from '../lib.ts';
import type { Db } from '../../src/db/connect.ts';

/**
 * Issues 2 and 25: authenticated GET /workflow against a bare Koa handler returning the same JSON.
 * Aim: p50 within 1.5x of the bare handler at one connection, the per-token rate limit included
 * (issue 25: it counts in memory and settles about once a second, so a read writes nothing).
 * Measured twice: one caller at a time (service latency, microsecond resolution) and saturated
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
      const auth1 = await latency('GET /workflow (token), 1 conn', url, { headers });
      const auth1Writes = await writes.count();
      const bare1 = await latency('bare Koa, same JSON, 1 conn', `${env.bare}/`);
      const before10 = await writes.count();
      const auth10 = await load('GET /workflow (token), 10 conn', url, { headers });
      const auth10Writes = (await writes.count()) - before10;
      const bare10 = await load('bare Koa, same JSON, 10 conn', `${env.bare}/`);
      const p50 = auth1.p50 / bare1.p50;
      return {
        rows: [auth1, bare1, auth10, bare10],
        notes: [
          `${ratio(auth1, bare1)} (target p50 <= 1.5x) ${p50 <= 1.5 ? 'OK' : 'MISSED'}`,
          ratio(auth10, bare10),
          `rate_limits statements: ${perRequest(auth1Writes, auth1)} at 1 conn, ${perRequest(auth10Writes, auth10)} at 10 conn`,
        ],
      };
    } finally {
      await writes.drop();
    }
  },
};

const perRequest = (writes: number, m: Measured) => `${writes} for about ${m.requests} requests (warm-up included)`;

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

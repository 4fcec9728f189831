import { latency } from '../lib.ts';
import type { Scenario } from '../scenario.ts';
import { seedTime } from '../seed.ts';

const day = (d: Date) => d.toISOString().slice(0, 10);

/**
 * Issue 5: GET /time for a user with 5,000 entries over a year (a week — the Week view — and a
 * month; the whole year for reference), target p50 < 20 ms; POST /time from 50 concurrent
 * clients at a steady pace, target p99 < 50 ms with no lost or duplicated entries.
 */
export const time: Scenario = {
  name: 'time',
  needsBig: true,
  async run(env) {
    const big = env.big!;
    const { ticketIds } = await seedTime(env.sql, big);
    await env.sql`analyze time_entries`;
    const headers = { authorization: `Bearer ${big.busyToken}` };
    const base = `${env.api}/api/w/${big.slug}/time`;
    const today = new Date();
    const monday = new Date(today.getTime() - ((today.getUTCDay() + 6) % 7) * 86400_000);
    const week = await latency('GET /time, one week', `${base}?from=${day(monday)}&to=${day(new Date(monday.getTime() + 6 * 86400_000))}`, {
      headers,
      connections: 4,
    });
    const month = await latency('GET /time, 30 days', `${base}?from=${day(new Date(today.getTime() - 29 * 86400_000))}&to=${day(today)}`, {
      headers,
      connections: 4,
    });
    const year = await latency('GET /time, 365 days (5,000 entries)', `${base}?from=${day(new Date(today.getTime() - 364 * 86400_000))}&to=${day(today)}`, {
      headers,
      connections: 2,
      durationMs: 3000,
    });

    const [{ n: before }] = await env.sql<[{ n: number }]>`select count(*)::int as n from time_entries where user_id = ${big.busyId}`;
    const body = JSON.stringify({ ticketId: ticketIds[0], spentOn: day(today), minutes: 15, note: 'bench' });
    const paced = (name: string, durationMs: number) =>
      latency(name, base, { headers, method: 'POST', body, connections: 50, ratePerConnection: 2, durationMs, warmupMs: 0 });
    // the first 2 s on their own: each pool connection's first write plans its statements and the
    // trigger functions (tens of ms each), and 50 clients queue behind them; then the steady pace,
    // the target's. Every request of both is counted for the lost/duplicated check.
    const cold = await paced('POST /time, 50 clients x 2/s, first 2 s', 2_000);
    const post = await paced('POST /time, 50 clients x 2/s', 10_000);
    const [{ n: after }] = await env.sql<[{ n: number }]>`select count(*)::int as n from time_entries where user_id = ${big.busyId}`;
    const created = (cold.statuses['201'] ?? 0) + (post.statuses['201'] ?? 0);
    return {
      rows: [week, month, year, cold, post],
      notes: [
        `GET /time one week: p50 ${week.p50.toFixed(2)} ms (target < 20) ${week.p50 < 20 ? 'OK' : 'MISSED'}; 30 days p50 ${month.p50.toFixed(2)} ms; 365 days p50 ${year.p50.toFixed(2)} ms (no target: a 5,000-entry answer)`,
        `POST /time: ${created} answered 201, entries grew by ${after - before} (${after - before === created ? 'no lost or duplicated entries' : 'MISMATCH'}); p99 ${post.p99.toFixed(2)} ms at the steady pace (target < 50) ${post.p99 < 50 ? 'OK' : 'MISSED'}; the first 2 s p50 ${cold.p50.toFixed(2)} ms, p99 ${cold.p99.toFixed(2)} ms`,
      ],
    };
  },
};

import { TokenVerifier } from '../src/core/auth/token-verifier.ts';
import type { Ctx } from '../src/core/ctx.ts';
import { cachedPlanPool, connect, type Db } from '../src/db/connect.ts';
import type { Statement } from './lib.ts';

/**
 * Runs one core operation as the holder of `token` and returns the statements it sent, in order
 * (the token's own lookup left out): what `sqlLatency` runs directly, beside the API.
 */
export async function captureStatements(dbUrl: string, token: string, op: (ctx: Ctx) => Promise<unknown>): Promise<Statement[]> {
  const seen: Statement[] = [];
  const sql = connect(dbUrl, { max: 1, debug: (_c, query, params) => seen.push({ query, params }) });
  try {
    const principal = await new TokenVerifier(sql, 0).verify(token, null, new Date());
    seen.length = 0;
    await op({ sql, principal, now: () => new Date() });
    return [...seen];
  } finally {
    await sql.end();
  }
}

/**
 * Runs one core operation as the holder of `token`, captures the statements it sends, and
 * returns EXPLAIN (ANALYZE, BUFFERS) of the one that `pick` chooses (default: the longest).
 */
export async function explainOperation(dbUrl: string, token: string, op: (ctx: Ctx) => Promise<unknown>, pick?: (q: string) => boolean): Promise<string> {
  const seen = await captureStatements(dbUrl, token, op);
  const candidates = seen.filter((s) => /^\s*(with|select)/i.test(s.query) && (!pick || pick(s.query)));
  const target = candidates.sort((a, b) => b.query.length - a.query.length)[0];
  if (!target) return '(no statement captured)';
  const sql = connect(dbUrl, { max: 1 });
  try {
    const rows = await sql.unsafe(`explain (analyze, buffers, costs off) ${target.query}`, target.params as never[]);
    return rows.map((r) => r['QUERY PLAN']).join('\n');
  } finally {
    await sql.end();
  }
}

/** A line saying whether a plan scans tickets sequentially. */
export function seqScanVerdict(plan: string): string {
  const seq = plan.split('\n').filter((l) => /Seq Scan on tickets\b/.test(l));
  return seq.length ? `sequential scan over tickets: YES (${seq.length} node(s))` : 'sequential scan over tickets: none (index scans only)';
}

/**
 * How PostgreSQL plans the operation's main statement (the longest it sends) when one connection
 * runs the operation `calls` times as the service does (its statements prepared, with whatever
 * plan setting the operation asks for): how many calls got the cached generic plan and how many
 * were planned afresh (`plan_cache_mode = auto` keeps planning afresh while the generic plan is
 * costed above the custom ones; /my asks for the cached plan, db/connect.ts `onCachedPlan`), and
 * what planning it afresh costs (EXPLAIN (SUMMARY) of the statement with its values: the minimum
 * of three).
 */
export async function planCache(
  dbUrl: string,
  token: string,
  op: (ctx: Ctx) => Promise<unknown>,
  calls = 10,
): Promise<{ generic: number; custom: number; planningMs: number }> {
  const seen = await captureStatements(dbUrl, token, op);
  const target = seen.filter((s) => /^\s*(with|select)/i.test(s.query)).sort((a, b) => b.query.length - a.query.length)[0];
  if (!target) throw new Error('no statement captured');
  const sql = connect(dbUrl, { max: 1 });
  try {
    const principal = await new TokenVerifier(sql, 0).verify(token, null, new Date());
    for (let i = 0; i < calls; i++) await op({ sql, principal, now: () => new Date() });
    // prepared on the pool's connection, or on its sibling's for a statement run on its cached plan
    const count = async (db: Db) => {
      const [row] = await db<{ generic: number; custom: number }[]>`
        select generic_plans::int as generic, custom_plans::int as custom from pg_prepared_statements where statement = ${target.query}`;
      return row;
    };
    const plans = (await count(sql)) ?? (await count(cachedPlanPool(sql)!)) ?? { generic: 0, custom: 0 };
    const planning: number[] = [];
    for (let i = 0; i < 3; i++) {
      const rows = await sql.unsafe(`explain (summary) ${target.query}`, target.params as never[]);
      planning.push(Number(/Planning Time: ([\d.]+) ms/.exec(rows.map((r) => r['QUERY PLAN']).join('\n'))?.[1] ?? NaN));
    }
    return { ...plans, planningMs: Math.min(...planning) };
  } finally {
    await sql.end();
  }
}

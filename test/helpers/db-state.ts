import { expect } from 'vitest';
import type { Db } from '../../src/db/connect.ts';

/**
 * Tables and columns that legitimately change on a refused request, left out of the checksum:
 * - tables whose name says they count or remember requests (rate-limit counters, login or reauth
 *   attempts, idempotency keys that may store a refused answer to replay it);
 * - `api_tokens.last_used_at` and `sessions.last_seen_at`, stamped by authentication itself.
 * Everything else in the public schema must be byte-for-byte unchanged after a 4xx.
 */
export const VOLATILE_TABLE = /(rate|limit|idempot|attempt|throttl|schema_migrations)/i;
export const VOLATILE_COLUMNS = ['last_used_at', 'last_seen_at'];

export type TableState = Map<string, string>;

// per database: a fork runs file after file with this module loaded (test/setup/per-file.ts)
const tablesOf = new WeakMap<Db, string[]>();

/** Row count and an md5 over every row (as jsonb text without the volatile columns) of every table. */
export async function tableState(sql: Db): Promise<TableState> {
  let tables = tablesOf.get(sql);
  if (!tables) {
    const rows = await sql<{ name: string }[]>`
      select c.relname as name from pg_class c join pg_namespace n on n.oid = c.relnamespace
      where n.nspname = 'public' and c.relkind in ('r', 'p') order by 1`;
    tables = rows.map((r) => r.name).filter((n) => !VOLATILE_TABLE.test(n));
    tablesOf.set(sql, tables);
  }
  const drop = VOLATILE_COLUMNS.map((c) => ` - '${c}'`).join('');
  // Table names come from pg_class, never from input; quoted as identifiers.
  const parts = tables.map(
    (t) => `select '${t}' as name, count(*)::text || ':' || coalesce(md5(string_agg(j, '' order by j)), '') as sum
            from (select (to_jsonb(x)${drop})::text as j from "${t.replace(/"/g, '""')}" x) s`,
  );
  const rows = await sql.unsafe<{ name: string; sum: string }[]>(parts.join(' union all '));
  return new Map(rows.map((r) => [r.name, r.sum]));
}

/** Names of the tables whose count or checksum differ. */
export function changedTables(before: TableState, after: TableState): string[] {
  const names = new Set([...before.keys(), ...after.keys()]);
  return [...names].filter((n) => before.get(n) !== after.get(n)).sort();
}

/** A refused request: the status, the error envelope with this code, and the given details. */
export function expectRefused(res: { status: number; body: any }, status: number, code: string, details?: Record<string, unknown>): void {
  expect(res.status, JSON.stringify(res.body)).toBe(status);
  expect(res.body).toEqual({ error: expect.objectContaining({ code, message: expect.any(String) }) });
  if (details) expect(res.body.error.details).toMatchObject(details);
}

/**
 * The tables a refused request changed, not counting what the audit log is for: every door audits
 * its refusals (docs/decisions.md, "Every door names its audit"), so rows added to ops_audit with
 * outcome `refused` or `failed`, and no other change there, are not a change of state.
 */
export async function changedByRefusal(sql: Db, before: TableState): Promise<string[]> {
  const changed = changedTables(before, await tableState(sql));
  if (!changed.includes('ops_audit')) return changed;
  const n = Number(before.get('ops_audit')!.split(':')[0]);
  const [old] = await sql<{ sum: string }[]>`
    select count(*)::text || ':' || coalesce(md5(string_agg(j, '' order by j)), '') as sum
    from (select (to_jsonb(x) - 'last_used_at' - 'last_seen_at')::text as j from (select * from ops_audit order by id limit ${n}) x) s`;
  const added = await sql<{ outcome: string }[]>`select outcome from ops_audit order by id offset ${n}`;
  const onlyRefusals = old!.sum === before.get('ops_audit') && added.length > 0 && added.every((r) => r.outcome === 'refused' || r.outcome === 'failed');
  return onlyRefusals ? changed.filter((t) => t !== 'ops_audit') : changed;
}

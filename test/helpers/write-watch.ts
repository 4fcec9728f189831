import type { Db } from '../../src/db/connect.ts';
import { VOLATILE_COLUMNS, VOLATILE_TABLE } from './db-state.ts';

/**
 * "A refused request changes nothing", checked by what was written rather than by checksumming
 * every table before and after each request (tableState: two full reads of the database per case,
 * most of the fuzz's time). Row-level triggers on every table that tableState covers (the same
 * VOLATILE_TABLE and VOLATILE_COLUMNS exclusions) append one row per changed row to
 * `test_watch.writes`: an insert, a delete, or an update whose row differs outside the volatile
 * columns (an update that writes the same values changes nothing, as for the checksum). The log
 * is transactional like the rows it describes: a rolled-back request leaves no entry, so "the
 * entries committed since" are exactly the request's lasting changes. It is at least as strict as
 * the checksum (a row inserted and deleted again in one committed request shows here, not there).
 * Lives in its own schema, so tableState never reads it. Install once per test database.
 */
export async function watchWrites(sql: Db): Promise<void> {
  const drop = VOLATILE_COLUMNS.map((c) => ` - '${c}'`).join('');
  await sql.unsafe(`
    create schema if not exists test_watch;
    create table if not exists test_watch.writes (id bigserial primary key, tbl text not null, op text not null);
    create or replace function test_watch.log_write() returns trigger language plpgsql as $$
    begin
      if tg_op = 'UPDATE' and (to_jsonb(old)${drop}) = (to_jsonb(new)${drop}) then return null; end if;
      insert into test_watch.writes (tbl, op) values (tg_table_name, tg_op);
      return null;
    end $$;`);
  const rows = await sql<{ name: string }[]>`
    select c.relname as name from pg_class c join pg_namespace n on n.oid = c.relnamespace
    where n.nspname = 'public' and c.relkind in ('r', 'p') and not c.relispartition order by 1`;
  for (const { name } of rows.filter((r) => !VOLATILE_TABLE.test(r.name))) {
    const t = `"${name.replace(/"/g, '""')}"`;
    await sql.unsafe(`drop trigger if exists test_watch_writes on ${t};
      create trigger test_watch_writes after insert or update or delete on ${t} for each row execute function test_watch.log_write()`);
  }
}

/** Where the write log stands: pass it to writesSince after the request. */
export async function writeMark(sql: Db): Promise<string> {
  const [row] = await sql<{ id: string }[]>`select coalesce(max(id), 0)::text as id from test_watch.writes`;
  return row!.id;
}

/** The lasting writes committed since `mark`: per table, how many rows were inserted, updated, deleted. */
export async function writesSince(sql: Db, mark: string): Promise<Map<string, { INSERT: number; UPDATE: number; DELETE: number }>> {
  const rows = await sql<{ tbl: string; op: 'INSERT' | 'UPDATE' | 'DELETE'; n: number }[]>`
    select tbl, op, count(*)::int as n from test_watch.writes where id > ${mark} group by tbl, op`;
  const out = new Map<string, { INSERT: number; UPDATE: number; DELETE: number }>();
  for (const r of rows) {
    const counts = out.get(r.tbl) ?? { INSERT: 0, UPDATE: 0, DELETE: 0 };
    counts[r.op] = r.n;
    out.set(r.tbl, counts);
  }
  return out;
}

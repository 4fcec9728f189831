import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Logger, runMigrations } from 'graphile-worker';
import type postgres from 'postgres';
import type { Db } from './connect.ts';

const quietLogger = new Logger(() => () => {});
const sqlDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../sql');

/** Held for the whole run, so two processes starting together apply each file once. */
const MIGRATION_LOCK = 7262001;

/**
 * First line of a file that must run outside a transaction (`create index concurrently` on a
 * live database). Such a file is recorded only after its last statement succeeds, so a file that
 * fails midway runs again from its top: write it to be re-runnable (`if not exists`).
 */
const NO_TRANSACTION = /^--\s*migrate:\s*no-transaction\s*$/;

export async function migrationFiles(dir = sqlDir): Promise<string[]> {
  return (await readdir(dir)).filter((f) => /^\d{3}_[a-z0-9_]+\.sql$/.test(f)).sort();
}

/**
 * A multi-statement string runs in one implicit transaction, where `create index concurrently`
 * is refused, so a non-transactional file is sent one statement at a time. It is split at lines
 * ending in `;`, which is why such a file may not hold function bodies or other multi-line
 * literals with a `;` at a line end.
 */
function statements(text: string): string[] {
  return text
    .split(/;[ \t]*$/m)
    .map((s) => s.trim())
    .filter((s) => s.replace(/^--.*$/gm, '').trim() !== '');
}

async function applyFile(conn: postgres.ReservedSql, file: string, text: string): Promise<void> {
  if (NO_TRANSACTION.test(text.split('\n', 1)[0] ?? '')) {
    for (const statement of statements(text)) await conn.unsafe(statement);
    await conn`insert into schema_migrations (version) values (${file})`;
    return;
  }
  // The reserved connection's own `begin` would take another connection from the pool, so the
  // transaction is opened by hand on the connection that holds the lock.
  await conn.unsafe('begin');
  try {
    await conn.unsafe(text);
    await conn`insert into schema_migrations (version) values (${file})`;
    await conn.unsafe('commit');
  } catch (err) {
    await conn.unsafe('rollback');
    throw err;
  }
}

/**
 * Applies the numbered `NNN_name.sql` files not yet recorded, each in its own transaction
 * (recorded in schema_migrations by that same transaction) unless marked `-- migrate:
 * no-transaction`. A failing file rolls back only itself and stops the run; the files before it
 * stay applied. graphile-worker's own schema is migrated by graphile-worker itself.
 */
export async function migrate(sql: Db, connectionString: string, dir = sqlDir): Promise<string[]> {
  const applied: string[] = [];
  const conn = await sql.reserve();
  try {
    await conn`select pg_advisory_lock(${MIGRATION_LOCK})`;
    try {
      await conn`create table if not exists schema_migrations (version text primary key, applied_at timestamptz not null default now())`;
      const done = new Set((await conn<{ version: string }[]>`select version from schema_migrations`).map((r) => r.version));
      for (const file of await migrationFiles(dir)) {
        if (done.has(file)) continue;
        await applyFile(conn, file, await readFile(path.join(dir, file), 'utf8'));
        applied.push(file);
      }
    } finally {
      // A broken connection has already lost the lock with its session; the first error is the one to report.
      await conn`select pg_advisory_unlock(${MIGRATION_LOCK})`.catch(() => {});
    }
  } finally {
    conn.release();
  }
  await runMigrations({ connectionString, logger: quietLogger });
  return applied;
}

/** True when every migration file has been applied (used by /readyz). */
export async function migrationsApplied(sql: Db, dir = sqlDir): Promise<boolean> {
  const files = await migrationFiles(dir);
  const rows = await sql<{ n: number }[]>`
    select count(*)::int as n from schema_migrations where version = any(${files}::text[])`;
  return rows[0]?.n === files.length;
}

import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Logger, runMigrations } from 'graphile-worker';
import type { Db } from './connect.ts';

const quietLogger = new Logger(() => () => {});
const sqlDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../sql');

export async function migrationFiles(): Promise<string[]> {
  return (await readdir(sqlDir)).filter((f) => /^\d{3}_[a-z0-9_]+\.sql$/.test(f)).sort();
}

/**
 * Applies the numbered `sql/NNN_name.sql` files not yet recorded, each in its own
 * transaction, under an advisory lock so concurrent starters do not race.
 * graphile-worker's own schema is migrated by graphile-worker itself.
 */
export async function migrate(sql: Db, connectionString: string): Promise<string[]> {
  const applied: string[] = [];
  await sql.begin(async (tx) => {
    await tx`select pg_advisory_xact_lock(7262001)`;
    await tx`create table if not exists schema_migrations (version text primary key, applied_at timestamptz not null default now())`;
    const done = new Set((await tx<{ version: string }[]>`select version from schema_migrations`).map((r) => r.version));
    for (const file of await migrationFiles()) {
      if (done.has(file)) continue;
      await tx.unsafe(await readFile(path.join(sqlDir, file), 'utf8'));
      await tx`insert into schema_migrations (version) values (${file})`;
      applied.push(file);
    }
  });
  await runMigrations({ connectionString, logger: quietLogger });
  return applied;
}

/** True when every migration file has been applied (used by /readyz). */
export async function migrationsApplied(sql: Db): Promise<boolean> {
  const files = await migrationFiles();
  const rows = await sql<{ n: number }[]>`
    select count(*)::int as n from schema_migrations where version = any(${files}::text[])`;
  return rows[0]?.n === files.length;
}

import postgres from 'postgres';

/** The database handle every core operation receives; inside a transaction it is the transaction. */
export type Db = postgres.Sql;

/** Called with every statement sent (postgres.js `debug`); tests use it to count round trips. */
export type QueryObserver = (connection: number, query: string, params: unknown[]) => void;

export function connect(url: string, opts: { max?: number; debug?: QueryObserver } = {}): Db {
  return postgres(url, {
    max: opts.max ?? 10,
    ...(opts.debug ? { debug: opts.debug } : {}),
    onnotice: () => {},
    idle_timeout: 30,
    connection: { application_name: 'worktracker' },
    transform: { undefined: null },
  });
}

/** Creates the named database on the server of `adminUrl` when it does not exist. */
export async function ensureDatabase(adminUrl: string, name: string): Promise<void> {
  const admin = postgres(adminUrl, { max: 1, onnotice: () => {} });
  try {
    const [row] = await admin`select 1 as one from pg_database where datname = ${name}`;
    if (!row) await admin.unsafe(`create database "${name.replace(/"/g, '""')}"`);
  } finally {
    await admin.end();
  }
}

/** Runs `fn` in a transaction, joining the caller's when `sql` already is one. */
export async function inTransaction<T>(sql: Db, fn: (sql: Db) => Promise<T>): Promise<T> {
  if ('savepoint' in sql) return fn(sql);
  return sql.begin((t) => fn(t as unknown as Db)) as Promise<T>;
}

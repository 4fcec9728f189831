import postgres from 'postgres';

/** The database handle every core operation receives; inside a transaction it is the transaction. */
export type Db = postgres.Sql;

/** Called with every statement sent (postgres.js `debug`); tests use it to count round trips. */
export type QueryObserver = (connection: number, query: string, params: unknown[]) => void;

/**
 * How long a new connection may take before the query fails with CONNECT_TIMEOUT (postgres.js
 * waits 30 s by default): a request during an outage should answer 503 soon, not hang.
 */
export const CONNECT_TIMEOUT_SECONDS = 5;

/**
 * Pause before a connection tries again after a failed attempt. postgres.js grows it to 20 s,
 * so after a restart longer than a few seconds the service stayed down that long after the
 * server was back; a short, capped pause recovers within about a second and costs one refused
 * connect per connection and second while the server is away.
 */
const reconnectBackoff = (attempt: number) => Math.min(0.05 * 2 ** attempt, 1);

/**
 * How long a connection of a short-lived pool (a command, a test) stays open unused. A service's
 * pools keep theirs longer (`SERVICE_IDLE_SECONDS`).
 */
const IDLE_SECONDS = 30;

/**
 * How long a connection of the web and worker processes stays open unused: a new PostgreSQL backend
 * starts with empty caches and plans every statement and trigger function afresh, so the first
 * write after a quiet half-minute took ~90 ms instead of ~8 (POST /time, 2 cores). Ten minutes, as
 * common pools keep them (HikariCP's idleTimeout); postgres.js still replaces each connection
 * after its max_lifetime (30-60 min).
 */
export const SERVICE_IDLE_SECONDS = 600;

export function connect(url: string, opts: { max?: number; debug?: QueryObserver; idleSeconds?: number } = {}): Db {
  const options = {
    max: opts.max ?? 10,
    ...(opts.debug ? { debug: opts.debug } : {}),
    onnotice: () => {},
    idle_timeout: opts.idleSeconds ?? IDLE_SECONDS,
    connect_timeout: CONNECT_TIMEOUT_SECONDS,
    backoff: reconnectBackoff,
    connection: { application_name: 'worktracker' },
    transform: { undefined: null },
  };
  const pool = postgres(url, options);
  // the pool for `onCachedPlan`: made on first use, ended with this one
  let cached: Db | null = null;
  cachedPlanPools.set(pool, () => {
    cached ??= postgres(url, {
      ...options,
      max: Math.ceil(options.max / 2),
      connection: { ...options.connection, plan_cache_mode: 'force_generic_plan' },
    });
    return cached;
  });
  const end = pool.end.bind(pool);
  pool.end = async (o?: { timeout?: number }) => {
    await cached?.end(o);
    return end(o);
  };
  return pool;
}

/** For each pool `connect` made, its sibling whose connections plan on the cached generic plan (`onCachedPlan`). */
const cachedPlanPools = new WeakMap<Db, () => Db>();

/** The pool `onCachedPlan` runs a statement on, outside a transaction: exported for the tests that count its plans. */
export function cachedPlanPool(sql: Db): Db | null {
  return cachedPlanPools.get(sql)?.() ?? null;
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

/** Whether `sql` is an open transaction (postgres.js gives only a transaction `savepoint`). */
const isTransaction = (sql: Db): boolean => 'savepoint' in sql;

/** Runs `fn` in a transaction, joining the caller's when `sql` already is one. */
export async function inTransaction<T>(sql: Db, fn: (sql: Db) => Promise<T>): Promise<T> {
  if (isTransaction(sql)) return fn(sql);
  return sql.begin((t) => fn(t as unknown as Db)) as Promise<T>;
}

/**
 * Runs `run`'s statement on its cached generic plan. PostgreSQL's own choice (`plan_cache_mode =
 * auto`) plans a prepared statement afresh on every call whenever the custom plans cost less than
 * the generic one, which for a large statement whose estimates lean on one column's statistics (a
 * workspace holding most tickets) can mean planning as long as running it, on every call. For
 * statements whose plan shape does not depend on the values (index ranges under literal page sizes).
 * - On a pool `connect` made: on its sibling pool, whose connections start with `plan_cache_mode =
 *   force_generic_plan`, so the statement is one round trip. Setting it per statement took a
 *   transaction around it (BEGIN, SET LOCAL with the statement, COMMIT): two more round trips, each
 *   a write to PostgreSQL's socket and a wake-up on either side (issue 25: about 1 ms of CPU per
 *   call on this machine's two cores).
 * - Inside a transaction (where the statement must see the transaction's own writes): it runs as it
 *   is. On a pool made elsewhere: in a transaction of its own with the setting as SET LOCAL.
 */
export async function onCachedPlan<T>(sql: Db, run: (sql: Db) => Promise<T>): Promise<T> {
  if (isTransaction(sql)) return run(sql);
  const pool = cachedPlanPool(sql);
  if (pool) return run(pool);
  return sql.begin(async (t) => {
    // sent now (`execute`), so it goes before whatever `run` sends, however many awaits `run` takes
    // before its statement (a statement queued first would be planned with the custom plans: 15 ms for "my work")
    const setting = t`set local plan_cache_mode = force_generic_plan`.execute();
    const [, result] = await Promise.all([setting, run(t as unknown as Db)]);
    return result;
  }) as Promise<T>;
}

/**
 * Sends `query` as an unnamed statement, which PostgreSQL plans with the bound values on every call:
 * for statements whose best plan depends on the values (a search term that may be rare or common).
 * postgres.js otherwise prepares named statements, whose plan PostgreSQL may make generic from the
 * sixth call on, one plan for every value. postgres.js reads this per-query option; its typings
 * only expose it on `sql.unsafe`.
 */
export function plannedPerCall<T>(query: T): T {
  (query as unknown as { options: { prepare?: boolean } }).options.prepare = false;
  return query;
}

/** postgres.js codes for a connection that failed, broke or timed out (not an error in a statement). */
const clientConnectionCodes = new Set(['CONNECTION_CLOSED', 'CONNECTION_DESTROYED', 'CONNECTION_ENDED', 'CONNECT_TIMEOUT']);
/** Socket errors while connecting or talking to the server. */
const socketCodes = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN']);
/** Server codes: 57P01 admin_shutdown, 57P02 crash_shutdown, 57P03 cannot_connect_now, class 08 connection exceptions. */
const serverUnavailable = (code: string) => code === '57P01' || code === '57P02' || code === '57P03' || code.startsWith('08');

/**
 * True when `err` says the database cannot be reached right now (down, restarting, refusing
 * connections): the request may succeed if retried later, so callers answer 503, not 500.
 */
export function isConnectionError(err: unknown): boolean {
  if (!err || typeof err !== 'object') return false;
  const code = (err as { code?: unknown }).code;
  if (typeof code === 'string') {
    if (clientConnectionCodes.has(code) || socketCodes.has(code)) return true;
    if (err instanceof postgres.PostgresError && serverUnavailable(code)) return true;
  }
  // Node reports a connect to several addresses that all failed as one AggregateError.
  return err instanceof AggregateError && err.errors.some(isConnectionError);
}

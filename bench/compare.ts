import { execFileSync } from 'node:child_process';
import { existsSync, symlinkSync } from 'node:fs';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { connect, ensureDatabase } from '../src/db/connect.ts';
import { startEmbedded } from '../src/db/embedded.ts';
import { migrate } from '../src/db/migrate.ts';
import { encodeUpdatedCursor } from '../src/core/tickets/cursor.ts';
import { ensureDemo } from '../src/core/demo/seed.ts';
import { spawnGroup, type Spawned } from '../test/helpers/spawn.ts';
import { freePort, withDatabase } from '../test/setup/global.ts';
import { latency, serviceEnv } from './lib.ts';
import { seedBigWorkspace } from './seed.ts';

/**
 * `npm run bench:compare -- <git ref> [rounds]`: the read paths of `npm run bench -- workflow
 * tickets`, served at once by the tree at <ref> and by this tree, over ONE seeded database, measured
 * in alternating order (before, after, after, before, ...) round after round, so both sides meet the
 * same machine load. Reports each side's median p50 and p99 over the rounds and the after/before ratio.
 * The old tree is checked out as a git worktree under the system temp folder and shares node_modules.
 */
async function main() {
  const ref = process.argv[2] ?? 'ede564e';
  const rounds = Number(process.argv[3] ?? 3);
  const before = path.join(os.tmpdir(), `wt-before-${ref}`);
  if (!existsSync(before)) {
    execFileSync('git', ['worktree', 'add', '--detach', before, ref], { stdio: 'inherit' });
    symlinkSync(path.resolve('node_modules'), path.join(before, 'node_modules'));
  }
  const dir = await mkdtemp(path.join(os.tmpdir(), 'wt-compare-'));
  await chmod(dir, 0o777);
  const pg = await startEmbedded({ dir: path.join(dir, 'pg'), port: await freePort(), fast: true });
  const adminUrl = pg.url('postgres');
  const dbUrl = withDatabase(adminUrl, 'wt_compare');
  await ensureDatabase(adminUrl, 'wt_compare');
  const sql = connect(dbUrl, { max: 4 });
  const procs: Spawned[] = [];
  try {
    await migrate(sql, dbUrl);
    await ensureDemo(sql);
    const big = await seedBigWorkspace(sql);
    await sql`vacuum analyze`;
    const ports = { before: await freePort(), after: await freePort() };
    const start = (cwd: string, port: number) => {
      const p = spawnGroup('sh', ['-c', `cd ${cwd} && exec node --import tsx src/main.ts web`], serviceEnv(dbUrl, port));
      procs.push(p);
      return p;
    };
    start(before, ports.before);
    start(process.cwd(), ports.after);
    for (const port of Object.values(ports)) await ready(`http://127.0.0.1:${port}/readyz`);

    const [deep] = await sql<{ at: string; id: string }[]>`
      select to_char(updated_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US') as at, id from tickets
      where project_id = any(${big.restrictedProjectIds}::uuid[]) and not archived
      order by updated_at desc, id desc offset 49999 limit 1`;
    const cursor = encodeUpdatedCursor({ at: deep!.at, id: deep!.id });
    const restricted = { authorization: `Bearer ${big.restrictedToken}` };
    const cases: { name: string; path: string; headers: Record<string, string>; connections: number }[] = [
      { name: 'GET /workflow', path: `/api/w/${big.slug}/workflow`, headers: restricted, connections: 1 },
      { name: 'list, first page', path: `/api/w/${big.slug}/tickets`, headers: restricted, connections: 4 },
      { name: 'list, after 50,000 rows', path: `/api/w/${big.slug}/tickets?cursor=${cursor}`, headers: restricted, connections: 4 },
      { name: 'list q=page, first page', path: `/api/w/${big.slug}/tickets?q=page`, headers: restricted, connections: 4 },
      { name: 'list q=page, after 50,000 rows', path: `/api/w/${big.slug}/tickets?q=page&cursor=${cursor}`, headers: restricted, connections: 4 },
      { name: 'list q=checkout, first page', path: `/api/w/${big.slug}/tickets?q=checkout`, headers: restricted, connections: 4 },
      {
        name: 'GET /tickets/{ref}, 200 events + 100 comments',
        path: `/api/w/${big.slug}/tickets/${big.heavyRef}`,
        headers: { authorization: `Bearer ${big.busyToken}` },
        connections: 4,
      },
      { name: 'GET /board, member token on 6 projects', path: `/api/w/${big.slug}/board`, headers: restricted, connections: 4 },
      { name: 'GET /board, owner (all tickets)', path: `/api/w/${big.slug}/board`, headers: { authorization: `Bearer ${big.ownerToken}` }, connections: 1 },
      { name: 'GET /my, member with 2,000 assigned', path: `/api/w/${big.slug}/my`, headers: { authorization: `Bearer ${big.busyToken}` }, connections: 4 },
      { name: 'GET /changes', path: `/api/w/${big.slug}/changes`, headers: restricted, connections: 4 },
    ];
    const results = new Map<string, { before: { p50: number; p99: number }[]; after: { p50: number; p99: number }[] }>();
    for (let r = 0; r < rounds; r++) {
      for (const c of cases) {
        const order = (r + cases.indexOf(c)) % 2 === 0 ? (['before', 'after'] as const) : (['after', 'before'] as const);
        for (const side of order) {
          const m = await latency(c.name, `http://127.0.0.1:${ports[side]}${c.path}`, {
            headers: c.headers,
            connections: c.connections,
            durationMs: 3000,
            warmupMs: 500,
          });
          if (m.non2xx || m.errors) throw new Error(`${side} ${c.name}: ${m.non2xx} non-2xx, ${m.errors} errors`);
          const entry = results.get(c.name) ?? { before: [], after: [] };
          entry[side].push({ p50: m.p50, p99: m.p99 });
          results.set(c.name, entry);
        }
      }
      console.error(`round ${r + 1}/${rounds} done`);
    }
    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
    console.log(
      `\n## before (${ref}) vs after (this tree), ${rounds} interleaved rounds, one database; ${os.cpus().length} cores, load average ${os.loadavg()[0]!.toFixed(1)}\n`,
    );
    console.log('| scenario | before p50 / p99 ms | after p50 / p99 ms | after/before p50 | per-round p50 ratios |');
    console.log('|---|---|---|---|---|');
    for (const [name, e] of results) {
      const b50 = median(e.before.map((x) => x.p50));
      const a50 = median(e.after.map((x) => x.p50));
      const ratios = e.after.map((a, i) => (a.p50 / e.before[i]!.p50).toFixed(2)).join(', ');
      console.log(
        `| ${name} | ${b50.toFixed(2)} / ${median(e.before.map((x) => x.p99)).toFixed(2)} | ${a50.toFixed(2)} / ${median(e.after.map((x) => x.p99)).toFixed(2)} | ${(a50 / b50).toFixed(2)} | ${ratios} |`,
      );
    }
  } finally {
    for (const p of procs) await p.stop();
    await sql.end();
    await pg.stop();
    await rm(dir, { recursive: true, force: true });
  }
}

// a loaded machine (load average above 10 on 2 cores) takes more than 30 s to start a server under tsx
async function ready(url: string) {
  for (let i = 0; i < 1200; i++) {
    if (
      await fetch(url).then(
        (r) => r.ok,
        () => false,
      )
    )
      return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`not ready: ${url}`);
}

main().then(
  () => process.exit(0),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);

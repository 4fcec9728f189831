import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { promisify } from 'node:util';
import { freePort } from '../../test/setup/global.ts';
import { spawnGroup } from '../../test/helpers/spawn.ts';
import { serviceEnv } from '../lib.ts';
import type { Scenario } from '../scenario.ts';

const RUNS = 3;
const IDLE_MS = 3000;

/** The ways a `web` process can run: compiled JavaScript (the Procfile) and TypeScript through tsx (`npm start`). */
const MODES = {
  compiled: ['dist/main.js', 'web'],
  tsx: ['--import', 'tsx', 'src/main.ts', 'web'],
} as const;
type Mode = keyof typeof MODES;

async function vmRssMb(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  return Number(/^VmRSS:\s+(\d+)\s+kB/m.exec(status)![1]) / 1024;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/** One start: spawn to the first 200 from /readyz, then the resident set after idling IDLE_MS. */
async function startOnce(mode: Mode, dbUrl: string): Promise<{ readyMs: number; rssMb: number }> {
  const port = await freePort();
  const began = performance.now();
  const proc = spawnGroup('node', [...MODES[mode]], serviceEnv(dbUrl, port));
  try {
    for (;;) {
      const ok = await fetch(`http://127.0.0.1:${port}/readyz`).then(
        (r) => r.status === 200,
        () => false,
      );
      if (ok) break;
      if (proc.child.exitCode !== null) throw new Error(`${mode} web exited: ${proc.output()}`);
      if (performance.now() - began > 60_000) throw new Error(`${mode} web not ready after 60 s: ${proc.output()}`);
      await new Promise((r) => setTimeout(r, 20));
    }
    const readyMs = performance.now() - began;
    await new Promise((r) => setTimeout(r, IDLE_MS));
    return { readyMs, rssMb: await vmRssMb(proc.child.pid!) };
  } finally {
    await proc.stop();
  }
}

/**
 * Start-up of a `web` process to its first 200 from /readyz, and its RSS after idling 3 s,
 * compiled (`node dist/main.js web`, as the Procfile runs it) against tsx (`node --import tsx
 * src/main.ts web`, as `npm start` runs it). The database is already migrated, so this is the
 * process's own start-up: module loading, the pool, caches, listening. Runs alternate between
 * the two ways; medians of three each. dist/ is built first (its time reported too).
 */
export const startup: Scenario = {
  name: 'startup',
  async run(env) {
    const b0 = performance.now();
    await promisify(execFile)('node', ['scripts/build.js']);
    const buildMs = performance.now() - b0;
    const results: Record<Mode, { readyMs: number; rssMb: number }[]> = { compiled: [], tsx: [] };
    for (let i = 0; i < RUNS; i++) for (const mode of Object.keys(MODES) as Mode[]) results[mode].push(await startOnce(mode, env.dbUrl));
    const notes = [`npm run build (incremental tsc and asset copy): ${(buildMs / 1000).toFixed(1)} s`];
    for (const mode of Object.keys(MODES) as Mode[]) {
      const r = results[mode];
      notes.push(
        `${mode} web (node ${MODES[mode].join(' ')}): to /readyz median ${median(r.map((x) => x.readyMs)).toFixed(0)} ms ` +
          `(runs ${r.map((x) => x.readyMs.toFixed(0)).join(', ')}); idle RSS median ${median(r.map((x) => x.rssMb)).toFixed(0)} MB ` +
          `(runs ${r.map((x) => x.rssMb.toFixed(0)).join(', ')})`,
      );
    }
    return { rows: [], notes };
  },
};

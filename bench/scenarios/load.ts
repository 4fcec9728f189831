import { issueToken } from '../../src/core/auth/tokens.ts';
import type { Demo } from '../../src/core/demo/seed.ts';
import type { Db } from '../../src/db/connect.ts';
import { spawnGroup, waitUntil } from '../../test/helpers/spawn.ts';
import { freePort } from '../../test/setup/global.ts';
import { mixedLoad, serviceEnv, type Measured, type MixEntry, type MixedResult } from '../lib.ts';
import type { Scenario } from '../scenario.ts';

/**
 * Issue 9: 200 concurrent clients mixing reads and writes for 60 s (BENCH_LOAD_SECONDS,
 * BENCH_LOAD_CLIENTS) against two web processes on the demo workspace. Every write carries a
 * unique marker; afterwards the database must hold each acknowledged write exactly once,
 * and no answer may be a 5xx. The bare Koa handler under the same 200 clients is the baseline.
 */
export const load: Scenario = {
  name: 'load',
  async run(env) {
    const seconds = Number(process.env.BENCH_LOAD_SECONDS ?? 60);
    const clients = Number(process.env.BENCH_LOAD_CLIENTS ?? 200);
    const { sql, demo } = env;
    const setup = await loadSetup(sql, demo);

    const port = await freePort();
    const second = spawnGroup('node', ['--import', 'tsx', 'src/main.ts', 'web'], serviceEnv(env.dbUrl, port));
    const bases = [env.api, `http://127.0.0.1:${port}`];
    try {
      await waitUntil(`second web process: ${second.output()}`, async () => (await fetch(`${bases[1]}/readyz`)).ok, 30_000);
      await preflight(bases[0]!, setup);
      const mixed = await mixedLoad(`mixed, ${clients} clients, 2 web processes`, {
        bases,
        tokens: setup.tokens,
        mix: loadMix(setup, 'bench'),
        connections: clients,
        durationMs: seconds * 1000,
      });
      const bare = await mixedLoad(`bare Koa, ${clients} clients, 1 process`, {
        bases: [env.bare],
        tokens: ['none'],
        mix: [{ name: 'bare', method: 'GET', path: '/', weight: 1 }],
        connections: clients,
        durationMs: Math.min(seconds, 20) * 1000,
      });
      const alive = second.child.exitCode === null;
      const checks = await writeChecks(sql, setup, 'bench', mixed);
      const rows: Measured[] = [
        mixed,
        ...Object.entries(mixed.byName).map(([name, m]) => ({
          name: `  ${name}`,
          requests: m.requests,
          rps: m.requests / seconds,
          p50: m.p50,
          p99: m.p99,
          errors: 0,
          non2xx: 0,
          resolution: 'us' as const,
        })),
        bare,
      ];
      return {
        rows,
        notes: [
          `${seconds} s, ${clients} closed-loop clients over 2 web processes and 20 tokens; answers ${JSON.stringify(mixed.statuses)}, ${mixed.errors} without an answer; 5xx: ${checks.fivexx} ${checks.fivexx === 0 ? 'OK' : 'FAILED'}; both web processes alive: ${alive}`,
          ...checks.lines,
          `throughput ${mixed.rps.toFixed(0)} req/s vs bare ${bare.rps.toFixed(0)} req/s (${(mixed.rps / bare.rps).toFixed(2)}x); p50 ${mixed.p50.toFixed(1)} ms vs ${bare.p50.toFixed(1)} ms, p99 ${mixed.p99.toFixed(1)} ms vs ${bare.p99.toFixed(1)} ms (bare: ${Math.min(seconds, 20)} s)`,
        ],
      };
    } finally {
      await second.stop();
    }
  },
};

/** What the mixed load works on: the demo workspace, its first project and ticket, and 20 tokens. */
export interface LoadSetup {
  slug: string;
  workspaceId: string;
  projectId: string;
  ticketId: string;
  tokens: string[];
}

export async function loadSetup(sql: Db, demo: Demo): Promise<LoadSetup> {
  const [ws] = await sql<[{ id: string }]>`select id from workspaces where slug = ${demo.slug}`;
  const project = demo.projects[0]!;
  const [ticket] = await sql<[{ id: string }]>`select id from tickets where project_id = ${project.id} order by number limit 1`;
  // Twenty tokens of the owner and the admin (both see every ticket), as several integrations would hold.
  const tokens: string[] = [];
  for (let i = 0; i < 20; i++) {
    const who = i % 2 ? demo.people.admin : demo.people.owner;
    const t = await issueToken(sql, {
      workspaceId: ws.id,
      createdBy: who.id,
      actsAs: who.id,
      kind: 'delegated',
      name: `load ${i}`,
      scopes: ['read', 'write', 'triage'],
    });
    tokens.push(t.token);
  }
  return { slug: demo.slug, workspaceId: ws.id, projectId: project.id, ticketId: ticket.id, tokens };
}

const timeBody = (setup: LoadSetup, note: string) =>
  JSON.stringify({ ticketId: setup.ticketId, spentOn: new Date().toISOString().slice(0, 10), minutes: 5, note });

/**
 * The mix: reads of the list, a ticket and the workflow, and two writes. Each write's title or
 * note is `load <run> <marker>`, so the rows of one run (`run`: no spaces) are told apart from
 * another's over the same database.
 */
export function loadMix(setup: LoadSetup, run: string): MixEntry[] {
  const w = `/api/w/${setup.slug}`;
  return [
    { name: 'GET /tickets?limit=20', method: 'GET', path: `${w}/tickets?limit=20`, weight: 3 },
    { name: 'GET /tickets/{id}', method: 'GET', path: `${w}/tickets/${setup.ticketId}`, weight: 2 },
    { name: 'GET /workflow', method: 'GET', path: `${w}/workflow`, weight: 1 },
    {
      name: 'POST /tickets',
      method: 'POST',
      path: `${w}/tickets`,
      body: JSON.stringify({ projectId: setup.projectId, title: `load ${run} {marker}` }),
      weight: 2,
    },
    { name: 'POST /time', method: 'POST', path: `${w}/time`, body: timeBody(setup, `load ${run} {marker}`), weight: 2 },
  ];
}

/** One time entry through `base` before the load: a server that refuses the mix's write fails here, not as a count of 4xx. */
export async function preflight(base: string, setup: LoadSetup): Promise<void> {
  const pre = await fetch(`${base}/api/w/${setup.slug}/time`, {
    method: 'POST',
    headers: { authorization: `Bearer ${setup.tokens[0]}`, 'content-type': 'application/json' },
    body: timeBody(setup, 'preflight'),
  });
  if (pre.status !== 201) throw new Error(`POST /time preflight at ${base} answered ${pre.status}: ${await pre.text()}`);
}

/** The 5xx answers of a run, and whether each acknowledged write of run `run` is in the database exactly once. */
export async function writeChecks(sql: Db, setup: LoadSetup, run: string, r: MixedResult): Promise<{ fivexx: number; ok: boolean; lines: string[] }> {
  const prefix = `load ${run} `;
  const tickets = await counts(
    prefix,
    sql`select title as marker, count(*)::int as n from tickets where workspace_id = ${setup.workspaceId} and starts_with(title, ${prefix}) group by title`,
  );
  const entries = await counts(
    prefix,
    sql`select note as marker, count(*)::int as n from time_entries where workspace_id = ${setup.workspaceId} and starts_with(note, ${prefix}) group by note`,
  );
  const fivexx = Object.entries(r.statuses)
    .filter(([s]) => Number(s) >= 500)
    .reduce((n, [, c]) => n + c, 0);
  const verdicts = [verdict('POST /tickets', r, 'POST /tickets', tickets), verdict('POST /time', r, 'POST /time', entries)];
  return { fivexx, ok: fivexx === 0 && verdicts.every((v) => v.ok), lines: verdicts.map((v) => v.line) };
}

async function counts(prefix: string, rows: Promise<{ marker: string; n: number }[]>): Promise<Map<string, number>> {
  return new Map((await rows).map((r) => [r.marker.slice(prefix.length), r.n]));
}

/** Lost: acknowledged but not in the database. Duplicated: in the database more than once. */
function verdict(label: string, r: MixedResult, name: string, found: Map<string, number>): { ok: boolean; line: string } {
  const acked = r.acked[name] ?? [];
  const lost = acked.filter((m) => !found.has(m)).length;
  const duplicated = [...found.values()].filter((n) => n > 1).length;
  const unknown = r.unknown[name] ?? [];
  const unknownWritten = unknown.filter((m) => found.has(m)).length;
  const ok = lost === 0 && duplicated === 0;
  return {
    ok,
    line: `${label}: ${acked.length} acknowledged, ${found.size} rows with a marker, lost ${lost}, duplicated ${duplicated} ${ok ? 'OK' : 'FAILED'} (${unknown.length} sent without an answer, ${unknownWritten} of them written)`,
  };
}

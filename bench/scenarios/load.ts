import { issueToken } from '../../src/core/auth/tokens.ts';
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

    const port = await freePort();
    const second = spawnGroup('node', ['--import', 'tsx', 'src/main.ts', 'web'], serviceEnv(env.dbUrl, port));
    const bases = [env.api, `http://127.0.0.1:${port}`];
    try {
      await waitUntil(`second web process: ${second.output()}`, async () => (await fetch(`${bases[1]}/readyz`)).ok, 30_000);
      const today = new Date().toISOString().slice(0, 10);
      const timeBody = (note: string) => JSON.stringify({ ticketId: ticket.id, spentOn: today, minutes: 5, note });
      const w = `/api/w/${demo.slug}`;
      const mix: MixEntry[] = [
        { name: 'GET /tickets?limit=20', method: 'GET', path: `${w}/tickets?limit=20`, weight: 3 },
        { name: 'GET /tickets/{id}', method: 'GET', path: `${w}/tickets/${ticket.id}`, weight: 2 },
        { name: 'GET /workflow', method: 'GET', path: `${w}/workflow`, weight: 1 },
        { name: 'POST /tickets', method: 'POST', path: `${w}/tickets`, body: JSON.stringify({ projectId: project.id, title: 'load {marker}' }), weight: 2 },
        { name: 'POST /time', method: 'POST', path: `${w}/time`, body: timeBody('load {marker}'), weight: 2 },
      ];
      const pre = await fetch(`${bases[0]}${w}/time`, {
        method: 'POST',
        headers: { authorization: `Bearer ${tokens[0]}`, 'content-type': 'application/json' },
        body: timeBody('preflight'),
      });
      if (pre.status !== 201) throw new Error(`POST /time preflight answered ${pre.status}: ${await pre.text()}`);

      const mixed = await mixedLoad(`mixed, ${clients} clients, 2 web processes`, { bases, tokens, mix, connections: clients, durationMs: seconds * 1000 });
      const bare = await mixedLoad(`bare Koa, ${clients} clients, 1 process`, {
        bases: [env.bare],
        tokens: ['none'],
        mix: [{ name: 'bare', method: 'GET', path: '/', weight: 1 }],
        connections: clients,
        durationMs: Math.min(seconds, 20) * 1000,
      });
      const alive = second.child.exitCode === null;

      const tickets = await counts(
        sql`select title as marker, count(*)::int as n from tickets where workspace_id = ${ws.id} and title like 'load %' group by title`,
      );
      const entries = await counts(
        sql`select note as marker, count(*)::int as n from time_entries where workspace_id = ${ws.id} and note like 'load %' group by note`,
      );
      const fivexx = Object.entries(mixed.statuses)
        .filter(([s]) => Number(s) >= 500)
        .reduce((n, [, c]) => n + c, 0);
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
          `${seconds} s, ${clients} closed-loop clients over 2 web processes and 20 tokens; answers ${JSON.stringify(mixed.statuses)}, ${mixed.errors} without an answer; 5xx: ${fivexx} ${fivexx === 0 ? 'OK' : 'FAILED'}; both web processes alive: ${alive}`,
          verdict('POST /tickets', mixed, 'POST /tickets', tickets),
          verdict('POST /time', mixed, 'POST /time', entries),
          `throughput ${mixed.rps.toFixed(0)} req/s vs bare ${bare.rps.toFixed(0)} req/s (${(mixed.rps / bare.rps).toFixed(2)}x); p50 ${mixed.p50.toFixed(1)} ms vs ${bare.p50.toFixed(1)} ms, p99 ${mixed.p99.toFixed(1)} ms vs ${bare.p99.toFixed(1)} ms (bare: ${Math.min(seconds, 20)} s)`,
        ],
      };
    } finally {
      await second.stop();
    }
  },
};

async function counts(rows: Promise<{ marker: string; n: number }[]>): Promise<Map<string, number>> {
  return new Map((await rows).map((r) => [r.marker.slice('load '.length), r.n]));
}

/** Lost: acknowledged but not in the database. Duplicated: in the database more than once. */
function verdict(label: string, r: MixedResult, name: string, found: Map<string, number>): string {
  const acked = r.acked[name] ?? [];
  const lost = acked.filter((m) => !found.has(m)).length;
  const duplicated = [...found.values()].filter((n) => n > 1).length;
  const unknown = r.unknown[name] ?? [];
  const unknownWritten = unknown.filter((m) => found.has(m)).length;
  const ok = lost === 0 && duplicated === 0;
  return `${label}: ${acked.length} acknowledged, ${found.size} rows with a marker, lost ${lost}, duplicated ${duplicated} ${ok ? 'OK' : 'FAILED'} (${unknown.length} sent without an answer, ${unknownWritten} of them written)`;
}

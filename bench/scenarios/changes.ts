import { latency } from '../lib.ts';
import type { Scenario } from '../scenario.ts';

/** Issue 4: GET /changes with nothing new — what thousands of pollers hit. Target: p50 < 3 ms. */
export const changes: Scenario = {
  name: 'changes',
  needsBig: true,
  async run(env) {
    const big = env.big!;
    const headers = { authorization: `Bearer ${big.restrictedToken}` };
    const base = `${env.api}/api/w/${big.slug}/changes`;
    const first = await fetch(`${base}?after=0&limit=500`, { headers });
    const { nextAfter } = (await first.json()) as { nextAfter: number };
    const [{ n }] = await env.sql<[{ n: number }]>`select count(*)::int as n from ticket_changes where workspace_id = ${big.workspaceId}`;
    const idle1 = await latency('GET /changes, nothing new, 1 conn', `${base}?after=${nextAfter}`, { headers });
    const idle10 = await latency('GET /changes, nothing new, 10 conn', `${base}?after=${nextAfter}`, { headers, connections: 10 });
    const page = await latency('GET /changes?after=0 (first page of 100)', `${base}?after=0`, { headers, connections: 4 });
    return {
      rows: [idle1, idle10, page],
      notes: [
        `${n} changes in the workspace; caught-up poller at after=${nextAfter}`,
        `nothing new: p50 ${idle1.p50.toFixed(2)} ms at 1 connection (target < 3) ${idle1.p50 < 3 ? 'OK' : 'MISSED'}, ${idle10.p50.toFixed(2)} ms at 10 (${idle10.rps.toFixed(0)} polls/s)`,
      ],
    };
  },
};

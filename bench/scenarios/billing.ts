import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { addPerson } from '../../src/core/people/users.ts';
import { assignNumber } from '../../src/core/tickets/numbering.ts';
import { createClient, createProject, createWorkspace } from '../../src/core/workspaces/create.ts';
import { loadTimesheet } from '../../src/core/documents/load-timesheet.ts';
import { renderHtml } from '../../src/core/documents/render/html.ts';
import { createPdfRenderer, findChromium } from '../../src/jobs/machinery/pdf.ts';
import { totalsOf } from '../../src/core/documents/load-timesheet.ts';
import type { Db } from '../../src/db/connect.ts';
import { makeLogger } from '../../src/log.ts';
import { spawnGroup } from '../../test/helpers/spawn.ts';
import { serviceEnv, type Measured } from '../lib.ts';
import type { Scenario } from '../run.ts';

const CLIENTS = 30;
const TICKETS_PER_CLIENT = 20;
const ENTRIES = 20_000;
const PASSWORD = 'bench-billing-password';

/** A workspace with 30 clients, one project each, and 20,000 billable entries in a closed October. */
async function seedBilling(sql: Db): Promise<{ slug: string; periodId: string; email: string }> {
  const slug = `bill-${process.pid}`;
  const ws = await createWorkspace(sql, { slug, name: 'Bench Billing Agency' });
  const email = `owner-${process.pid}@bench.test`;
  const owner = await addPerson(sql, { workspaceId: ws, email, name: 'Bench Owner', role: 'owner', password: PASSWORD });
  const locales = ['en-US', 'de-DE', 'fr-FR'];
  for (let i = 1; i <= CLIENTS; i++) {
    const code = `BC${String(i).padStart(2, '0')}`;
    const client = await createClient(sql, { workspaceId: ws, name: `Client ${i} Ltd`, code, locale: locales[i % 3]! });
    const project = await createProject(sql, { workspaceId: ws, key: `B${String(i).padStart(2, '0')}`, name: `Project ${i}`, billingClientId: client });
    const [meta] = await sql<{ state: string; kind: string; priority: string }[]>`
      select (select id from workflow_states where workspace_id = ${ws} and is_default) as state,
             (select id from ticket_kinds where workspace_id = ${ws} and is_inbound) as kind,
             (select id from priorities where workspace_id = ${ws} and is_default) as priority`;
    for (let t = 0; t < TICKETS_PER_CLIENT; t++) {
      await sql.begin(async (tx) => {
        const t = tx as unknown as Db;
        const [row] = await t<{ id: string }[]>`select gen_random_uuid() as id`;
        const n = await assignNumber(t, ws, project, row!.id);
        await t`
          insert into tickets (id, workspace_id, project_id, number, title, kind_id, state_id, priority_id, reporter_id, billing_client_id)
          values (${row!.id}, ${ws}, ${project}, ${n}, ${`Work package ${n} for client ${i}`}, ${meta!.kind}, ${meta!.state}, ${meta!.priority}, ${owner}, ${client})`;
      });
    }
  }
  const [period] = await sql<{ id: string }[]>`
    insert into periods (workspace_id, period_start, period_end, closed_at) values (${ws}, '2026-10-01', '2026-10-31', now()) returning id`;
  await sql`
    with t as (select id, project_id, billing_client_id, row_number() over (order by id) - 1 as i, count(*) over () as n from tickets where workspace_id = ${ws})
    insert into time_entries (workspace_id, ticket_id, user_id, project_id, billing_client_id, period_id, spent_on, timezone, minutes)
    select ${ws}, t.id, ${owner}, t.project_id, t.billing_client_id, ${period!.id}, '2026-10-01'::date + (g % 31), 'UTC', 15 + (g % 8) * 15
    from generate_series(0, ${ENTRIES - 1}) g join t on t.i = g % t.n`;
  await sql`analyze time_entries`;
  return { slug, periodId: period!.id, email };
}

const vm = async (pid: number, field: 'VmRSS' | 'VmHWM') => {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  return Number(/\d+/.exec(status.split('\n').find((l) => l.startsWith(field)) ?? '0')?.[0] ?? 0) / 1024;
};

const percentile = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))]!;

/**
 * Issue 11: a billing run over 20,000 entries for 30 clients (html and csv), allocation plus
 * rendering by a worker in its own process, target under 10 s; documents/s and the worker's peak
 * RSS. Then pdf rendering with a warm browser, target p50 < 300 ms per document, for a typical
 * timesheet (40 lines) and for this run's big ones (about 670 lines); pages per document.
 */
export const billing: Scenario = {
  name: 'billing',
  async run(env) {
    const { slug, periodId, email } = await seedBilling(env.sql);
    const dataDir = await mkdtemp(path.join(os.tmpdir(), 'wt-bench-worker-'));
    const workerEnv = { ...serviceEnv(env.dbUrl, 0), WORKER: 'on', CHROMIUM_PATH: '/nonexistent/chromium', DATA_DIR: dataDir };
    const worker = spawnGroup('node', ['--import', 'tsx', 'src/main.ts', 'worker'], workerEnv);
    const notes: string[] = [];
    const rows: Measured[] = [];
    try {
      await new Promise((r) => setTimeout(r, 4000)); // the worker starts and idles
      const pid = worker.child.pid!;
      const idleRss = await vm(pid, 'VmRSS');
      const login = await fetch(`${env.api}/api/auth/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ email, password: PASSWORD }),
      });
      const cookie = (login.headers.get('set-cookie') ?? '').split(';')[0]!;
      const { csrfToken } = (await login.json()) as { csrfToken: string };
      const began = performance.now();
      const res = await fetch(`${env.api}/api/w/${slug}/billing/runs`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', cookie, 'x-csrf-token': csrfToken },
        body: JSON.stringify({ periodId }),
      });
      const run = (await res.json()) as { id: string };
      let peakRss = idleRss;
      let status = '';
      let allocatedMs = 0;
      while (!['completed', 'failed'].includes(status)) {
        await new Promise((r) => setTimeout(r, 25));
        [{ status }] = await env.sql<[{ status: string }]>`select status from billing_runs where id = ${run.id}`;
        if (!allocatedMs && status !== 'allocating') allocatedMs = performance.now() - began;
        peakRss = Math.max(peakRss, await vm(pid, 'VmRSS'));
        if (performance.now() - began > 300_000) throw new Error('the run took over 5 minutes');
      }
      const totalMs = performance.now() - began;
      const [{ docs, lines }] = await env.sql<[{ docs: number; lines: number }]>`
        select (select count(*)::int from documents where run_id = ${run.id}) as docs,
               (select count(*)::int from billing_run_entries where run_id = ${run.id}) as lines`;
      notes.push(
        `run over ${lines} entries for ${CLIENTS} clients: ${status}; allocation ${(allocatedMs / 1000).toFixed(2)} s, allocation plus rendering ${(totalMs / 1000).toFixed(2)} s (target < 10 s) ${totalMs < 10_000 ? 'OK' : 'MISSED'}`,
        `${docs} documents (html and csv) in ${(totalMs / 1000).toFixed(2)} s: ${(docs / (totalMs / 1000)).toFixed(1)} documents/s; worker RSS idle ${idleRss.toFixed(0)} MB, peak during the run ${peakRss.toFixed(0)} MB`,
      );

      // pdf with a warm browser, in this process
      const chromium = findChromium();
      if (!chromium) notes.push('pdf: no Chromium installed, not measured');
      else {
        const pdf = createPdfRenderer(chromium, makeLogger('silent'))!;
        const tmp = await mkdtemp(path.join(os.tmpdir(), 'wt-bench-pdf-'));
        try {
          const [sheet] = await env.sql<{ id: string }[]>`select id from timesheets where run_id = ${run.id} order by number limit 1`;
          const big = (await loadTimesheet(env.sql, sheet!.id))!;
          const typicalLines = big.sections[0]!.lines.slice(0, 40);
          const typical = { ...big, sections: [{ ...big.sections[0]!, lines: typicalLines, totals: totalsOf(typicalLines) }], totals: totalsOf(typicalLines) };
          await pdf.render(renderHtml(typical)); // warm
          for (const [label, model, n] of [
            ['typical timesheet (40 lines)', typical, 30],
            [`this run's timesheet (${big.sections[0]!.lines.length} lines)`, big, 10],
          ] as const) {
            const html = renderHtml(model);
            const ms: number[] = [];
            let bytes: Uint8Array = new Uint8Array();
            for (let i = 0; i < n; i++) {
              const t0 = performance.now();
              bytes = await pdf.render(html);
              ms.push(performance.now() - t0);
            }
            const file = path.join(tmp, 'doc.pdf');
            await writeFile(file, bytes);
            const info = await promisify(execFile)('pdfinfo', [file]).then(
              (r) => r.stdout,
              () => '',
            );
            const pages = /Pages:\s+(\d+)/.exec(info)?.[1] ?? '?';
            const p50 = percentile(ms, 50);
            const rps = 1000 / (ms.reduce((a, b) => a + b, 0) / n);
            rows.push({ name: `pdf, ${label}`, requests: n, rps, p50, p99: percentile(ms, 99), errors: 0, non2xx: 0, resolution: 'us' });
            notes.push(
              `pdf ${label}: p50 ${p50.toFixed(0)} ms, p99 ${percentile(ms, 99).toFixed(0)} ms over ${n} renders, ${pages} page(s) per document${label.startsWith('typical') ? ` (target p50 < 300 ms) ${p50 < 300 ? 'OK' : 'MISSED'}` : ''}`,
            );
          }
        } finally {
          await pdf.close();
          await rm(tmp, { recursive: true, force: true });
        }
      }
    } finally {
      await worker.stop();
      await rm(dataDir, { recursive: true, force: true });
    }
    return { rows, notes };
  },
};

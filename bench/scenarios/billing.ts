import { execFile } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { addPerson } from '../../src/core/people/users.ts';
import { assignNumber } from '../../src/core/tickets/numbering.ts';
import { createClient, createProject, createWorkspace } from '../../src/core/workspaces/create.ts';
import { loadTimesheet } from '../../src/core/documents/load-timesheet.ts';
import { renderHtml } from '../../src/core/documents/render/html.ts';
import { chromium, type Browser } from 'playwright-core';
import { CHROMIUM_ARGS, createPdfRenderer, findChromium } from '../../src/jobs/machinery/pdf.ts';
import { timesheetFooter } from '../../src/core/documents/pdf-renderer.ts';
import type { TimesheetModel } from '../../src/core/documents/timesheet-model.ts';
import { totalsOf } from '../../src/core/documents/load-timesheet.ts';
import type { Db } from '../../src/db/connect.ts';
import { makeLogger } from '../../src/log.ts';
import { spawnGroup } from '../../test/helpers/spawn.ts';
import { serviceEnv, target, type Measured } from '../lib.ts';
import type { Scenario } from '../scenario.ts';

const CLIENTS = 30;
const TICKETS_PER_CLIENT = 20;
const ENTRIES = 20_000;
const PASSWORD = 'bench-billing-password';

/**
 * A workspace with 30 clients, one project each, and 20,000 billable entries in a closed October,
 * priced (issue 23): two categories with workspace rates in EUR and USD changing mid-month, client
 * and project overrides, clients in both currencies, with VAT, a reverse-charge note and payment terms.
 */
export async function seedBilling(sql: Db): Promise<{ slug: string; periodId: string; email: string }> {
  const slug = `bill-${process.pid}`;
  const ws = await createWorkspace(sql, { slug, name: 'Bench Billing Agency' });
  const email = `owner-${process.pid}@bench.test`;
  const owner = await addPerson(sql, { workspaceId: ws, email, name: 'Bench Owner', role: 'owner', password: PASSWORD });
  const locales = ['en-US', 'de-DE', 'fr-FR'];
  const categories = await sql<{ id: string }[]>`
    insert into consultant_categories (workspace_id, name) values (${ws}, 'Senior'), (${ws}, 'Junior') returning id`;
  const [senior, junior] = categories.map((c) => c.id) as [string, string];
  // workspace defaults in both currencies, the senior rate changing in the middle of the period
  await sql`
    insert into rates (workspace_id, category_id, currency, hourly_minor, effective_from) values
      (${ws}, ${senior}, 'EUR', 12000, '2026-01-01'), (${ws}, ${senior}, 'EUR', 13000, '2026-10-16'), (${ws}, ${junior}, 'EUR', 8000, '2026-01-01'),
      (${ws}, ${senior}, 'USD', 14000, '2026-01-01'), (${ws}, ${senior}, 'USD', 15000, '2026-10-16'), (${ws}, ${junior}, 'USD', 9000, '2026-01-01')`;
  for (let i = 1; i <= CLIENTS; i++) {
    const code = `BC${String(i).padStart(2, '0')}`;
    const client = await createClient(sql, { workspaceId: ws, name: `Client ${i} Ltd`, code, locale: locales[i % 3]! });
    const project = await createProject(sql, { workspaceId: ws, key: `B${String(i).padStart(2, '0')}`, name: `Project ${i}`, billingClientId: client });
    // every fourth client in dollars, the German-speaking ones with VAT, every fifth reverse charge; overrides per client and per project
    const currency = i % 4 === 0 ? 'USD' : 'EUR';
    await sql`
      update clients set currency = ${currency}, payment_terms_days = 30,
        tax_rate_bp = ${i % 3 === 1 ? 1900 : 0}, tax_label = ${i % 3 === 1 ? 'MwSt. 19 %' : null},
        tax_note = ${i % 5 === 0 ? 'Reverse charge: VAT to be accounted for by the recipient.' : null}
      where id = ${client}`;
    if (i % 5 === 0)
      await sql`insert into rates (workspace_id, category_id, client_id, currency, hourly_minor, effective_from) values (${ws}, ${senior}, ${client}, ${currency}, 11000, '2026-01-01')`;
    if (i % 7 === 0)
      await sql`insert into rates (workspace_id, category_id, project_id, currency, hourly_minor, effective_from) values (${ws}, ${junior}, ${project}, ${currency}, 9500, '2026-10-10')`;
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
    insert into time_entries (workspace_id, ticket_id, user_id, project_id, billing_client_id, period_id, spent_on, timezone, minutes, category_id)
    select ${ws}, t.id, ${owner}, t.project_id, t.billing_client_id, ${period!.id}, '2026-10-01'::date + (g % 31), 'UTC', 15 + (g % 8) * 15,
           case when g % 3 = 0 then ${junior}::uuid else ${senior}::uuid end
    from generate_series(0, ${ENTRIES - 1}) g join t on t.i = g % t.n`;
  await sql`analyze time_entries`;
  return { slug, periodId: period!.id, email };
}

const vm = async (pid: number, field: 'VmRSS' | 'VmHWM') => {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  return Number(/\d+/.exec(status.split('\n').find((l) => l.startsWith(field)) ?? '0')?.[0] ?? 0) / 1024;
};

const percentile = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))]!;

/** A run has allocated and rendered once it is past `rendering`: awaiting approval (review clients, issue 23), delivering, or done. */
const RENDERED = ['awaiting_approval', 'delivering', 'completed', 'failed', 'voided'];

/**
 * Issue 11, with rates (issue 23) and review: a billing run over 20,000 priced entries for 30
 * clients (html and csv), allocation plus rendering by a worker in its own process, targets under
 * 10 s (issue 23) and under 5 s on a quiet machine (issue 25); documents/s and the worker's peak
 * RSS. Then pdf (issue 25): the project's renderer side by side with raw playwright-core printing
 * the same html on a warm page in this process, target p50 at most 1.5x, for a typical timesheet
 * (40 entries, one page) and for this run's big ones (about 670 entries); pages per document.
 */
export const billing: Scenario = {
  name: 'billing',
  async run(env) {
    const seeding = performance.now();
    const { slug, periodId, email } = await seedBilling(env.sql);
    const dataDir = await mkdtemp(path.join(os.tmpdir(), 'wt-bench-worker-'));
    const workerEnv = { ...serviceEnv(env.dbUrl, 0), WORKER: 'on', CHROMIUM_PATH: '/nonexistent/chromium', DATA_DIR: dataDir };
    const worker = spawnGroup('node', ['--import', 'tsx', 'src/main.ts', 'worker'], workerEnv);
    const notes: string[] = [`seeded ${ENTRIES} priced entries for ${CLIENTS} clients in ${((performance.now() - seeding) / 1000).toFixed(1)} s`];
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
      const load = await loadAverage();
      const cpuBefore = await treeCpuMs();
      let cpuAllocated = 0;
      const began = performance.now();
      const res = await fetch(`${env.api}/api/w/${slug}/billing/runs`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', cookie, 'x-csrf-token': csrfToken },
        body: JSON.stringify({ periodId }),
      });
      const run = (await res.json()) as { id: string };
      if (!run.id) throw new Error(`the run did not start: ${res.status} ${JSON.stringify(run)}`);
      let peakRss = idleRss;
      let status = '';
      let allocatedMs = 0;
      while (!RENDERED.includes(status)) {
        await new Promise((r) => setTimeout(r, 25));
        [{ status }] = await env.sql<[{ status: string }]>`select status from billing_runs where id = ${run.id}`;
        if (!allocatedMs && status !== 'allocating') [allocatedMs, cpuAllocated] = [performance.now() - began, await treeCpuMs()];
        peakRss = Math.max(peakRss, await vm(pid, 'VmRSS'));
        if (performance.now() - began > 300_000) throw new Error('the run took over 5 minutes');
      }
      const totalMs = performance.now() - began;
      const cpuMs = (await treeCpuMs()) - cpuBefore;
      const [{ docs, lines, priced }] = await env.sql<[{ docs: number; lines: number; priced: number }]>`
        select (select count(*)::int from documents where run_id = ${run.id}) as docs,
               (select count(*)::int from billing_run_entries where run_id = ${run.id}) as lines,
               (select count(*)::int from billing_run_entries where run_id = ${run.id} and amount_minor is not null) as priced`;
      const s = (ms: number) => `${(ms / 1000).toFixed(2)} s`;
      if (priced !== lines) notes.push(`NOT ALL LINES PRICED: ${priced} of ${lines}`);
      notes.push(
        `run over ${lines} entries (${priced} priced) for ${CLIENTS} clients: ${status}; allocation ${s(allocatedMs)}, allocation plus rendering ${s(totalMs)} (load average before ${load})`,
        `CPU time of the processes the bench started (PostgreSQL, the worker, the API) meanwhile: ${s(cpuMs)}, ${s(cpuAllocated - cpuBefore)} of it by the end of allocation; on a loaded machine this, not the wall time, is what the run itself costs`,
        target({ issue: 23, name: 'a priced run of 20,000 entries for 30 clients, allocation plus rendering', value: totalMs / 1000, limit: 10, unit: 's' }),
        target({ issue: 25, name: 'the same on a quiet machine', value: totalMs / 1000, limit: 5, unit: 's' }),
        `${docs} documents (html and csv) in ${s(totalMs)}: ${(docs / (totalMs / 1000)).toFixed(1)} documents/s; worker RSS idle ${idleRss.toFixed(0)} MB, peak during the run ${peakRss.toFixed(0)} MB`,
      );
      const [sheet] = await env.sql<{ id: string }[]>`select id from timesheets where run_id = ${run.id} order by number limit 1`;
      const pdf = await comparePdf((await loadTimesheet(env.sql, sheet!.id))!);
      rows.push(...pdf.rows);
      notes.push(...pdf.notes);
    } finally {
      await worker.stop();
      await rm(dataDir, { recursive: true, force: true });
    }
    return { rows, notes };
  },
};

/**
 * CPU time (user and system) of the live processes descended from this one and of the children
 * they reaped, in ms: the embedded PostgreSQL and its backends, the API and the worker. On a shared machine whose load average is
 * many times its cores, the wall time of a run says more about the neighbours than about the run.
 */
async function treeCpuMs(): Promise<number> {
  const procs: { pid: number; ppid: number; ticks: number }[] = [];
  for (const name of await readdir('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const stat = await readFile(`/proc/${name}/stat`, 'utf8').catch(() => '');
    if (!stat) continue;
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    procs.push({ pid: Number(name), ppid: Number(f[1]), ticks: Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14]) });
  }
  const parent = new Map(procs.map((p) => [p.pid, p.ppid]));
  const ours = (pid: number) => {
    for (let p = parent.get(pid); p !== undefined && p > 1; p = parent.get(p)) if (p === process.pid) return true;
    return false;
  };
  return procs.filter((p) => ours(p.pid)).reduce((a, p) => a + p.ticks, 0) * (1000 / CLOCK_TICKS);
}

/** The kernel's clock ticks per second for /proc's CPU times (USER_HZ, 100 on Linux). */
const CLOCK_TICKS = 100;

const loadAverage = async () => (await readFile('/proc/loadavg', 'utf8')).split(' ').slice(0, 3).join(' ');

/**
 * The project's pdf renderer against raw playwright-core (`page.setContent` + `page.pdf`, A4 with
 * backgrounds, on a warm page of its own browser) for the same html, in this process, interleaved
 * so that both see the same machine; and, for the record, what a fresh context and page per
 * document (the renderer before issue 25) costs against the same raw print.
 */
async function comparePdf(big: TimesheetModel): Promise<{ rows: Measured[]; notes: string[] }> {
  const chromiumPath = findChromium();
  if (!chromiumPath) return { rows: [], notes: ['pdf: no Chromium installed, not measured'] };
  const rows: Measured[] = [];
  const notes: string[] = [];
  const pdf = createPdfRenderer(chromiumPath, makeLogger('silent'))!;
  const browser = await chromium.launch({ executablePath: chromiumPath, args: CHROMIUM_ARGS });
  const tmp = await mkdtemp(path.join(os.tmpdir(), 'wt-bench-pdf-'));
  try {
    const raw = await browser.newPage();
    const typicalLines = big.sections[0]!.lines.slice(0, 40);
    const typical: TimesheetModel = {
      ...big,
      sections: [{ ...big.sections[0]!, lines: typicalLines, totals: totalsOf(typicalLines) }],
      totals: totalsOf(typicalLines),
    };
    const variants = {
      raw: (html: string) => raw.setContent(html).then(() => raw.pdf({ format: 'A4', printBackground: true })),
      project: (html: string, model: TimesheetModel) => pdf.render(html, timesheetFooter(model)),
      fresh: (html: string) => freshContextPrint(browser, html),
    };
    for (const [label, model, n] of [
      ['typical timesheet (40 entries)', typical, 30],
      [`this run's timesheet (${big.sections[0]!.lines.length} entries)`, big, 10],
    ] as const) {
      const html = renderHtml(model);
      const ms: Record<keyof typeof variants, number[]> = { raw: [], project: [], fresh: [] };
      let bytes: Uint8Array = new Uint8Array();
      for (const v of Object.values(variants)) for (let i = 0; i < 3; i++) await v(html, model); // warm
      for (let i = 0; i < n; i++) {
        // a different order each round, so neither side always runs right after the other
        const order = (Object.keys(variants) as (keyof typeof variants)[]).sort(() => (i % 2 ? 1 : -1));
        for (const name of order) {
          const t0 = performance.now();
          const out = await variants[name](html, model);
          ms[name].push(performance.now() - t0);
          if (name === 'project') bytes = out;
        }
      }
      const file = path.join(tmp, 'doc.pdf');
      await writeFile(file, bytes);
      const info = await promisify(execFile)('pdfinfo', [file]).then(
        (r) => r.stdout,
        () => '',
      );
      const pages = /Pages:\s+(\d+)/.exec(info)?.[1] ?? '?';
      const p50 = (name: keyof typeof variants) => percentile(ms[name], 50);
      for (const name of ['project', 'raw', 'fresh'] as const) {
        const rps = 1000 / (ms[name].reduce((a, b) => a + b, 0) / n);
        rows.push({ name: `pdf ${name}, ${label}`, requests: n, rps, p50: p50(name), p99: percentile(ms[name], 99), errors: 0, non2xx: 0, resolution: 'us' });
      }
      const ratio = p50('project') / p50('raw');
      notes.push(
        `pdf ${label}, ${pages} page(s): project p50 ${p50('project').toFixed(0)} ms, raw playwright-core on a warm page ${p50('raw').toFixed(0)} ms: ${ratio.toFixed(2)}x; ` +
          `a fresh context and page per document (the renderer before issue 25) ${p50('fresh').toFixed(0)} ms, ${(p50('fresh') / p50('raw')).toFixed(2)}x raw`,
      );
      if (model === typical)
        notes.push(target({ issue: 25, name: 'pdf of a typical timesheet, p50 to raw playwright-core on a warm page', value: ratio, limit: 1.5, unit: 'x' }));
    }
  } finally {
    await pdf.close();
    await browser.close();
    await rm(tmp, { recursive: true, force: true });
  }
  return { rows, notes };
}

/** What the renderer did before issue 25: a context and page of its own per document, with the same options. */
async function freshContextPrint(browser: Browser, html: string): Promise<Uint8Array> {
  const context = await browser.newContext({ javaScriptEnabled: false, serviceWorkers: 'block' });
  try {
    await context.route('**/*', (route) => (/^(data|about):/.test(route.request().url()) ? route.continue() : route.abort('blockedbyclient')));
    const page = await context.newPage();
    await page.setContent(html, { waitUntil: 'load' });
    return await page.pdf({ format: 'A4', printBackground: true });
  } finally {
    await context.close();
  }
}

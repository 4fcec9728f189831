import { actOnFailed, forceUnlock, retryJob, runCronNow } from '../../core/ops/job-actions.ts';
import { jobQueueNow } from '../../core/ops/job-live.ts';
import { jobTasks, taskSeries } from '../../core/ops/job-queue.ts';
import { jobDetail, searchJobs, type Attempt, type LiveJob } from '../../core/ops/job-search.ts';
import { countFailed, failedJobs, type FailedFilter } from '../../core/ops/jobs.ts';
import { crontabView, taskStats } from '../../core/ops/stats.ts';
import { runOp } from '../../core/operation.ts';
import { defineAction, safeNext, withMessage, type OpsRequest, type OpsRoute } from '../route.ts';
import { age, html, ms, token, when, type Html } from '../html.ts';
import { actionForm, layout, num, table } from '../layout.ts';
import { jobControlRoutes, queuedSection, tasksSection, throughputSection, unknownTasksWarning, workersSection } from './job-controls.ts';

const page = (r: OpsRequest, title: string, body: Html, live = false) => ({
  page: layout({ title, principal: r.principal, csrf: r.csrf, section: 'jobs', live, notice: r.query.msg, error: r.query.err }, body),
});
const FILTER_KEYS = ['task', 'queue', 'error', 'before'] as const;
/** The failed-jobs filter a query or form names: its blank fields are no filter. */
const filterOf = (fields: Record<string, string | undefined>): FailedFilter =>
  Object.fromEntries(FILTER_KEYS.flatMap((k) => (fields[k] !== undefined && fields[k] !== '' ? [[k, fields[k]]] : [])));
const filterQuery = (f: Record<string, string | undefined>) =>
  new URLSearchParams(Object.entries(f).filter((e): e is [string, string] => typeof e[1] === 'string' && e[1] !== '')).toString();

async function jobsPage(r: OpsRequest) {
  const now = r.ctx.now();
  // the live queue is one statement (one read of graphile-worker's view for counts, lists and workers)
  const [{ counts, running, queued, workers }, failed, { stats }, cron, tasks, series] = await Promise.all([
    runOp(jobQueueNow, r.ctx, {}),
    runOp(failedJobs, r.ctx, filterOf(r.query)),
    runOp(taskStats, r.ctx, {}),
    runOp(crontabView, r.ctx, {}),
    runOp(jobTasks, r.ctx, {}),
    runOp(taskSeries, r.ctx, {}),
  ]);
  const f = filterOf(r.query);
  const countRows = counts.map(
    (c) =>
      html`<tr>
        <td>${c.task}</td>
        <td>${c.queue ?? '–'}</td>
        <td class="num">${c.waiting}</td>
        <td class="num">${c.scheduled}</td>
        <td class="num">${c.running}</td>
        <td class="num">${c.failed}</td>
        <td>${age(c.oldestWaiting, now)}</td>
      </tr>`,
  );
  const runningRows = running.map(
    (j) =>
      html`<tr>
        <td><a href="/ops/jobs/${j.id}">${j.id}</a> ${j.task}</td>
        <td>${j.lockedBy ?? ''}</td>
        <td>${age(j.lockedAt, now)}</td>
        <td>
          ${j.workerAlive ? 'alive' : 'not beating'}${!j.workerAlive && r.canAct && j.lockedBy ? actionForm('/ops/jobs/unlock', r.csrf, 'Force unlock', { workerId: j.lockedBy }) : ''}
        </td>
      </tr>`,
  );
  const groups = failed.groups.map(
    (g) => html`<li><a href="/ops/jobs?${filterQuery({ error: g.error })}">${g.error || '(no message)'}</a>: ${g.count} (${g.task})</li>`,
  );
  const failedRows = failed.jobs.map(
    (j) =>
      html`<tr>
        <td><a href="/ops/jobs/${j.id}">${j.id}</a></td>
        <td>${j.task}</td>
        <td>${token(j.key)}</td>
        <td>${j.errorGroup}</td>
        <td class="num">${j.attempts}/${j.maxAttempts}</td>
        <td>${j.nextRun ? when(j.nextRun) : 'gave up'}</td>
        <td>${r.canAct ? html`${actionForm('/ops/jobs/retry', r.csrf, 'Retry', { jobId: j.id })} <a href="/ops/jobs/${j.id}/cancel">Cancel</a>` : ''}</td>
      </tr>`,
  );
  const filterForm = html`<form method="get" action="/ops/jobs" class="filters">
    ${FILTER_KEYS.map((k) => html`<label for="f-${k}">${k === 'before' ? 'Failed before' : k[0]!.toUpperCase() + k.slice(1)} <input id="f-${k}" name="${k}" ${k === 'before' ? html`type="date"` : ''} value="${f[k] ?? ''}" /></label>`)}
    <button type="submit">Filter</button>
  </form>`;
  const bulk =
    r.canAct && failed.total > 0
      ? html`<p>
          <a href="/ops/jobs/bulk?action=retry&${filterQuery(f)}">Retry all ${failed.total} matching</a> ·
          <a href="/ops/jobs/bulk?action=cancel&${filterQuery(f)}">Cancel all ${failed.total} matching</a>
        </p>`
      : '';
  const cronRows = cron.map(
    (c) =>
      html`<tr>
        <td>${c.task}</td>
        <td><code>${c.schedule}</code></td>
        <td>${when(c.lastExecution)}</td>
        <td>${c.lastOutcome ?? '–'}</td>
        <td>${when(c.nextRun)}</td>
        <td>${r.canAct ? actionForm('/ops/jobs/cron/run', r.csrf, 'Run now', { task: c.task }) : ''}</td>
      </tr>`,
  );
  return page(
    r,
    'Jobs',
    html`<form method="get" action="/ops/jobs/search" class="filters" role="search">
        <label for="q">Search jobs <input id="q" name="q" placeholder="task, key, payload text or an id" /></label><button type="submit">Search</button>
      </form>
      ${unknownTasksWarning(counts, tasks)}
      <h2>Queues</h2>
      ${table('Jobs per task and queue', ['Task', 'Queue', num('Waiting'), num('Scheduled'), num('Running'), num('Failed'), 'Oldest waiting'], countRows, 'No jobs queued.')}
      <h2>Waiting and scheduled</h2>
      ${queuedSection(r, queued, tasks)}
      <h2>Tasks</h2>
      ${tasksSection(r, counts, tasks, now)}
      <h2>Workers</h2>
      ${workersSection(workers, now)}
      <h2>Running</h2>
      ${table('Running jobs', ['Job', 'Worker', 'Locked for', 'Worker state'], runningRows, 'No running jobs.')}
      <h2>Failed</h2>
      ${
        groups.length
          ? html`<p>By error:</p>
              <ul>
                ${groups}
              </ul>`
          : ''
      }${filterForm}${bulk}
      ${table('Failed jobs', ['Job', 'Task', 'Key', 'Last error', num('Attempts'), 'Next run', ''], failedRows, 'No failed jobs.')}
      <h2>Throughput</h2>
      ${throughputSection(stats, series, now)}
      <h2>Crontab</h2>
      ${table('Recurring tasks', ['Task', 'Schedule (UTC)', 'Last run', 'Last outcome', 'Next run', ''], cronRows, 'No recurring tasks.')}`,
    true,
  );
}

async function bulkPage(r: OpsRequest) {
  const action = r.query.action === 'cancel' ? 'cancel' : 'retry';
  const f = filterOf(r.query);
  const n = await runOp(countFailed, r.ctx, f);
  const describe = Object.entries(f).map(([k, v]) => html`<li>${k}: ${String(v)}</li>`);
  return page(
    r,
    `${action === 'retry' ? 'Retry' : 'Cancel'} failed jobs`,
    html`<p>This will ${action} <strong data-count>${n}</strong> failed job(s) matching:</p>
      <ul>
        ${describe.length ? describe : html`<li>every failed job</li>`}
      </ul>
      ${r.canAct && n > 0 ? actionForm('/ops/jobs/bulk', r.csrf, `${action === 'retry' ? 'Retry' : 'Cancel'} ${n} jobs`, { action, ...Object.fromEntries(Object.entries(f).map(([k, v]) => [k, String(v)])) }, action === 'cancel' ? 'danger' : '') : ''}
      <p><a href="/ops/jobs?${filterQuery(f as Record<string, string>)}">Back</a></p>`,
  );
}

const liveRow = (j: LiveJob) =>
  html`<tr>
    <td><a href="/ops/jobs/${j.id}">${j.id}</a></td>
    <td>${j.task}</td>
    <td>${j.queue ?? ''}</td>
    <td>${token(j.key)}</td>
    <td class="num">${j.attempts}/${j.maxAttempts}</td>
    <td>${j.lockedBy ? 'running' : j.lastError ? 'failed' : 'queued'}</td>
    <td>${when(j.runAt)}</td>
  </tr>`;
const produced = (a: Attempt) =>
  html`${a.runId ? html`<a href="/ops/billing/runs/${a.runId}">run</a> ` : ''}${a.documentId ? html`document ${a.documentId.slice(0, 8)} ` : ''}${a.deliveryId ? html`delivery ${a.deliveryId.slice(0, 8)}` : ''}`;
const attemptRow = (a: Attempt) =>
  html`<tr>
    <td>${a.jobId ? html`<a href="/ops/jobs/${a.jobId}">${a.jobId}</a>` : '–'}</td>
    <td>${a.task}</td>
    <td>${token(a.key)}</td>
    <td class="num">${a.attempt}</td>
    <td class="state-${a.outcome}">${a.outcome}</td>
    <td>${a.error ?? ''}</td>
    <td>${when(a.startedAt)}</td>
    <td>${ms(a.durationMs)}</td>
    <td>${produced(a)}</td>
  </tr>`;
const ATTEMPT_HEAD = ['Job', 'Task', 'Key', 'Attempt', 'Outcome', 'Error', 'Started', 'Took', 'Served'];

async function searchPage(r: OpsRequest) {
  const q = r.query.q ?? '';
  const found = q.trim() ? await runOp(searchJobs, r.ctx, { q }) : { live: [], history: [] };
  return page(
    r,
    `Jobs matching “${q}”`,
    html`<form method="get" action="/ops/jobs/search" class="filters" role="search">
        <label for="q">Search jobs <input id="q" name="q" value="${q}" /></label><button type="submit">Search</button>
      </form>
      <h2>In the queue</h2>
      ${table('Queued jobs', ['Job', 'Task', 'Queue', 'Key', 'Attempts', 'State', 'Run at'], found.live.map(liveRow), 'No queued job matches.')}
      <h2>History</h2>
      ${table('Attempts', ATTEMPT_HEAD, found.history.map(attemptRow), 'No attempt matches.')}`,
  );
}

async function jobPage(r: OpsRequest) {
  const { job, attempts } = await runOp(jobDetail, r.ctx, { jobId: r.params.id ?? '' });
  const facts = job
    ? html`<dl class="facts">
          <dt>Task</dt>
          <dd>${job.task}</dd>
          <dt>Queue</dt>
          <dd>${job.queue ?? '–'}</dd>
          <dt>Key</dt>
          <dd>${job.key ?? '–'}</dd>
          <dt>Attempts</dt>
          <dd>${job.attempts}/${job.maxAttempts}</dd>
          <dt>Runs at</dt>
          <dd>${heldByPause(job.runAt) ? 'held: its task is paused' : when(job.runAt)}</dd>
          <dt>Last error</dt>
          <dd>${job.lastError ?? '–'}</dd>
        </dl>
        ${
          r.canAct && !job.lockedBy
            ? html`${
                  job.lastError
                    ? actionForm('/ops/jobs/retry', r.csrf, 'Retry', { jobId: job.id, _back: `/ops/jobs/${job.id}` })
                    : heldByPause(job.runAt)
                      ? ''
                      : actionForm('/ops/jobs/run-now', r.csrf, 'Run now', { jobId: job.id, _back: `/ops/jobs/${job.id}` })
                } <a href="/ops/jobs/${job.id}/cancel">Cancel</a>`
            : ''
        }
        <h2>Payload</h2>
        <pre>${JSON.stringify(job.payload, null, 2)}</pre>`
    : html`<p>The job is no longer queued (it finished or was cancelled); its attempts are below.</p>
        ${
          attempts[0]
            ? html`<h2>Payload</h2>
                <pre>${JSON.stringify(attempts[0].payload, null, 2)}</pre>`
            : ''
        }`;
  return page(
    r,
    `Job ${r.params.id}`,
    html`${facts}
      <h2>Attempts</h2>
      ${table('Every attempt, oldest first', ATTEMPT_HEAD, attempts.map(attemptRow), 'No attempt yet.')}`,
    true,
  );
}

/** A job held by a paused task runs at a moment that never comes (src/core/jobs/paused.ts): say so instead. */
const heldByPause = (runAt: Date) => new Date(runAt).getUTCFullYear() >= 9999;

export const jobPages: OpsRoute[] = [
  { method: 'GET', path: '/jobs', page: jobsPage },
  { method: 'GET', path: '/jobs/search', page: searchPage },
  { method: 'GET', path: '/jobs/bulk', page: bulkPage },
  defineAction({
    method: 'POST',
    path: '/jobs/bulk',
    op: actOnFailed,
    sent: (r) => ({ ...filterOf(r.body), action: r.body.action === 'cancel' ? ('cancel' as const) : ('retry' as const) }),
    answer: (n, r) => ({ redirect: withMessage('/ops/jobs', 'msg', `${r.body.action === 'cancel' ? 'Cancelled' : 'Retried'} ${n} job(s).`) }),
  }),
  defineAction({
    method: 'POST',
    path: '/jobs/retry',
    op: retryJob,
    sent: (r) => ({ jobId: r.body.jobId ?? '' }),
    answer: (_, r) => ({ redirect: withMessage(safeNext(r.body._back, '/ops/jobs'), 'msg', `Job ${r.body.jobId}: retry queued.`) }),
  }),
  ...jobControlRoutes,
  defineAction({
    method: 'POST',
    path: '/jobs/unlock',
    op: forceUnlock,
    sent: (r) => ({ workerId: r.body.workerId ?? '' }),
    answer: () => ({ redirect: withMessage('/ops/jobs', 'msg', 'The worker’s jobs were unlocked.') }),
  }),
  defineAction({
    method: 'POST',
    path: '/jobs/cron/run',
    op: runCronNow,
    sent: (r) => ({ task: r.body.task ?? '' }),
    answer: (_, r) => ({ redirect: withMessage('/ops/jobs', 'msg', `${r.body.task} queued.`) }),
  }),
  { method: 'GET', path: '/jobs/:id', page: jobPage },
];

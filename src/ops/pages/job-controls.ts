import { cancelJob, pauseTask, resumeTask, runJobNow } from '../../core/ops/job-controls.ts';
import type { QueueCount, QueuedJob, WorkerRow } from '../../core/ops/job-live.ts';
import type { SeriesPoint, TaskCatalog } from '../../core/ops/job-queue.ts';
import { jobDetail } from '../../core/ops/job-search.ts';
import type { TaskStats } from '../../core/ops/stats.ts';
import { runOp } from '../../core/operation.ts';
import { age, html, ms, token, when, type Html } from '../html.ts';
import { actionForm, layout, num, table } from '../layout.ts';
import { defineAction, safeNext, withMessage, type OpsRequest, type OpsRoute } from '../route.ts';
import { barChart, type ChartWindow } from './chart.ts';

/**
 * The parts of /ops/jobs that control jobs not yet run (issue 26): the warning for jobs of a task
 * no worker handles, the waiting and scheduled jobs with "run now" and cancel (cancel asks for the
 * typed word CANCEL on its own page, as a void asks for VOID), the tasks with pause and resume, the
 * workers, and per-task charts over an hour, a day and 7 days.
 */

/** Jobs of tasks outside the catalog: they wait for ever, so the page says so above everything else. */
export function unknownTasksWarning(counts: QueueCount[], tasks: TaskCatalog): Html {
  const unknown = counts.filter((c) => !tasks.known.includes(c.task));
  if (unknown.length === 0) return html``;
  const n = unknown.reduce((s, c) => s + c.waiting + c.scheduled + c.failed, 0);
  return html`<section class="warning" aria-labelledby="unknown-tasks" data-unknown-tasks>
    <h2 id="unknown-tasks">Jobs no worker handles</h2>
    <p>
      ${n} job(s) wait for a task no worker runs, so they will never run: ${unknown.map((c, i) => html`${i ? ', ' : ''}<code>${c.task}</code>`)}. Cancel them
      below, or queue them again under a known task.
    </p>
    <p>The workers handle: ${tasks.known.map((t, i) => html`${i ? ', ' : ''}<code>${t}</code>`)}.</p>
  </section>`;
}

const cancelLink = (id: string, task: string) => html`<a href="/ops/jobs/${id}/cancel" aria-label="Cancel job ${id} (${task})">Cancel</a>`;

/** The waiting jobs in the order a worker takes them, then the next scheduled ones. */
export function queuedSection(r: OpsRequest, queued: QueuedJob[], tasks: TaskCatalog): Html {
  const rows = queued.map((j) => {
    const known = tasks.known.includes(j.task);
    const note = !known ? 'no worker handles it' : j.paused ? 'held: task paused' : j.state;
    return html`<tr data-job="${j.id}">
      <td><a href="/ops/jobs/${j.id}">${j.id}</a></td>
      <td>${j.task}</td>
      <td>${token(j.key)}</td>
      <td>${note}</td>
      <td>${j.paused ? '–' : when(j.runAt)}</td>
      <td>
        ${r.canAct ? html`${known && !j.paused ? actionForm('/ops/jobs/run-now', r.csrf, 'Run now', { jobId: j.id }) : ''} ${cancelLink(j.id, j.task)}` : ''}
      </td>
    </tr>`;
  });
  return table('Waiting and scheduled jobs', ['Job', 'Task', 'Key', 'State', 'Runs at', ''], rows, 'No job is waiting or scheduled.');
}

/** Each task an operator may pause, with its jobs in the queue and whether it is paused (by whom, since when). */
export function tasksSection(r: OpsRequest, counts: QueueCount[], tasks: TaskCatalog, now: Date): Html {
  const rows = tasks.pausable.map((task) => {
    const mine = counts.filter((c) => c.task === task);
    const sum = (k: 'waiting' | 'scheduled') => mine.reduce((s, c) => s + c[k], 0);
    const paused = tasks.paused.find((p) => p.task === task);
    return html`<tr data-task="${task}">
      <td>${task}</td>
      <td data-task-state>${paused ? html`paused by ${paused.pausedBy}, ${age(paused.pausedAt, now)} ago` : 'running'}</td>
      <td class="num">${sum('waiting')}</td>
      <td class="num">${sum('scheduled') - (paused?.held ?? 0)}</td>
      <td class="num">${paused?.held ?? 0}</td>
      <td>
        ${
          r.canAct
            ? paused
              ? actionForm('/ops/jobs/tasks/resume', r.csrf, `Resume ${task}`, { task })
              : actionForm('/ops/jobs/tasks/pause', r.csrf, `Pause ${task}`, { task })
            : ''
        }
      </td>
    </tr>`;
  });
  return table('Tasks: a paused task’s jobs are not taken', ['Task', 'State', num('Waiting'), num('Scheduled'), num('Held'), ''], rows, 'No tasks.');
}

/** The worker processes by their heartbeat, and lock holders without one. */
export function workersSection(workers: WorkerRow[], now: Date): Html {
  const rows = workers.map(
    (w) =>
      html`<tr>
        <td>${w.process ?? html`<span class="muted">no heartbeat</span>`}</td>
        <td>${w.workerIds.join(', ')}</td>
        <td>${w.alive ? 'alive' : 'not beating'}</td>
        <td>${w.beatAt ? `${age(w.beatAt, now)} ago` : '–'}</td>
        <td>${w.startedAt ? age(w.startedAt, now) : '–'}</td>
        <td class="num">${w.running}</td>
      </tr>`,
  );
  return table(
    'Worker processes',
    ['Process', 'Lock ids', 'State', 'Last heartbeat', 'Up for', num('Running jobs')],
    rows,
    'No worker is running: queued jobs wait until one starts.',
  );
}

const WINDOWS: { key: '1h' | '1d' | '7d'; stat: TaskStats['window']; heading: string; chart: ChartWindow }[] = [
  { key: '1h', stat: '1h', heading: 'Last hour', chart: { bars: 12, stepMs: 300_000, label: 'last hour' } },
  { key: '1d', stat: '24h', heading: 'Last day', chart: { bars: 24, stepMs: 3_600_000, label: 'last day' } },
  { key: '7d', stat: '7d', heading: 'Last 7 days', chart: { bars: 28, stepMs: 6 * 3_600_000, label: 'last 7 days' } },
];

/** Per task and window: attempts finished, failure rate, p50/p95, and a chart of the window. */
export function throughputSection(stats: TaskStats[], series: SeriesPoint[], now: Date): Html {
  const tasks = [...new Set([...stats.map((s) => s.task), ...series.map((s) => s.task)])].sort();
  const rows = tasks.map((task) => {
    const cells = WINDOWS.map(({ key, stat, chart }) => {
      const s = stats.find((x) => x.task === task && x.window === stat);
      const text = s ? `${s.finished} · ${Math.round((100 * s.failed) / Math.max(1, s.finished))}% failed · p50 ${ms(s.p50Ms)} · p95 ${ms(s.p95Ms)}` : '–';
      const points = series.filter((p) => p.task === task && p.window === key);
      return html`<td>${text}${barChart(task, chart, points, now)}</td>`;
    });
    return html`<tr>
      <td>${task}</td>
      ${cells}
    </tr>`;
  });
  return table(
    'Per task: attempts finished, failure rate, p50/p95 duration, and attempts over time (failures in red)',
    ['Task', ...WINDOWS.map((w) => w.heading)],
    rows,
    'No job has run in the last 7 days.',
  );
}

/** The confirmation a cancel asks for: what the job is, and the typed word. */
async function cancelPage(r: OpsRequest) {
  const id = r.params.id ?? '';
  const { job } = await runOp(jobDetail, r.ctx, { jobId: id });
  const body = !job
    ? html`<p>The job is no longer queued (it finished or was cancelled).</p>
        <p><a href="/ops/jobs/${id}">Back to the job</a></p>`
    : job.lockedBy
      ? html`<p>A worker is running the job now; it can be cancelled once it stops.</p>
          <p><a href="/ops/jobs/${id}">Back to the job</a></p>`
      : html`<dl class="facts">
            <dt>Task</dt>
            <dd>${job.task}</dd>
            <dt>Key</dt>
            <dd>${job.key ?? '–'}</dd>
            <dt>State</dt>
            <dd>${job.lastError ? 'failed' : job.runAt > r.ctx.now() ? 'scheduled' : 'waiting'}</dd>
            <dt>Runs at</dt>
            <dd>${when(job.runAt)}</dd>
          </dl>
          <form method="post" action="/ops/jobs/${id}/cancel" class="stack">
            <input type="hidden" name="_csrf" value="${r.csrf}" /><input type="hidden" name="_back" value="/ops/jobs/${id}/cancel" />
            <p>Cancelling removes the job from the queue: it will not run, and what it was for is not done. Its history stays.</p>
            <label for="confirmation">Type CANCEL to confirm <input id="confirmation" name="confirmation" required autocomplete="off" /></label>
            <button type="submit" class="danger">Cancel job ${id}</button>
          </form>
          <p><a href="/ops/jobs/${id}">Keep the job</a></p>`;
  return {
    page: layout({ title: `Cancel job ${id}`, principal: r.principal, csrf: r.csrf, section: 'jobs', notice: r.query.msg, error: r.query.err }, body),
  };
}

const back = (r: OpsRequest) => safeNext(r.body._back, '/ops/jobs');

export const jobControlRoutes: OpsRoute[] = [
  { method: 'GET', path: '/jobs/:id/cancel', page: cancelPage },
  defineAction({
    method: 'POST',
    path: '/jobs/:id/cancel',
    op: cancelJob,
    confirm: { field: 'confirmation', word: 'CANCEL', message: 'Type CANCEL to confirm.' },
    sent: (r) => ({ jobId: r.params.id ?? '' }),
    answer: (_, r) => ({ redirect: withMessage('/ops/jobs', 'msg', `Job ${r.params.id}: cancelled.`) }),
  }),
  defineAction({
    method: 'POST',
    path: '/jobs/run-now',
    op: runJobNow,
    sent: (r) => ({ jobId: r.body.jobId ?? '' }),
    answer: (_, r) => ({ redirect: withMessage(back(r), 'msg', `Job ${r.body.jobId}: runs now.`) }),
  }),
  defineAction({
    method: 'POST',
    path: '/jobs/tasks/pause',
    op: pauseTask,
    sent: (r) => ({ task: r.body.task ?? '' }),
    answer: (_, r) => ({ redirect: withMessage(back(r), 'msg', `${r.body.task} paused: no worker takes its jobs until you resume it.`) }),
  }),
  defineAction({
    method: 'POST',
    path: '/jobs/tasks/resume',
    op: resumeTask,
    sent: (r) => ({ task: r.body.task ?? '' }),
    answer: (_, r) => ({ redirect: withMessage(back(r), 'msg', `${r.body.task} resumed.`) }),
  }),
];

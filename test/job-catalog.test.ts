import { randomUUID } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { parseCrontab, type JobHelpers } from 'graphile-worker';
import ts from 'typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { allocateJob, crontab, crons, jobs, pollJob } from '../src/core/jobs/catalog.ts';
import { enqueue } from '../src/core/jobs/enqueue.ts';
import type { Db } from '../src/db/connect.ts';
import { jobTask, type JobServices } from '../src/jobs/declared.ts';
import { taskListFor } from '../src/jobs/tasks.ts';
import { makeLogger } from '../src/log.ts';
import { testDb, type TestDb } from './helpers/db.ts';
import { makeBillingRun, makePeriod, makeWorkspace, type Workspace } from './helpers/factories.ts';

/**
 * Issue 21, declared jobs: every job and crontab task is declared once (src/core/jobs/catalog.ts);
 * enqueue, the worker's task list and the crontab are built from the declarations, and no task
 * name is written anywhere else in src.
 */
const declared = [...Object.values(jobs), ...Object.values(crons)].map((d) => d.task);
const CATALOG = path.normalize('src/core/jobs/catalog.ts');

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sourceFiles(path.join(dir, e.name)) : e.name.endsWith('.ts') ? [path.join(dir, e.name)] : [],
  );
}

/** Every string and template literal of a file (text of each template part), import and export specifiers aside. */
function literalsOf(file: string): string[] {
  const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);
  const found: string[] = [];
  const visit = (node: ts.Node) => {
    if (ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) return;
    if (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) found.push(node.text);
    else if (ts.isTemplateExpression(node)) found.push(node.head.text, ...node.templateSpans.map((s) => s.literal.text));
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

describe('the job catalog', () => {
  it('names no task twice, and every name is a crontab identifier (a colon, no dot)', () => {
    expect(new Set(declared).size).toBe(declared.length);
    for (const task of declared) expect(task).toMatch(/^[a-z]+:[a-z]+$/);
  });

  it('no task name is written in src outside its declaration (SQL text and job keys included)', () => {
    const offenders: string[] = [];
    for (const file of sourceFiles('src')) {
      if (path.normalize(file) === CATALOG) continue;
      for (const text of literalsOf(file)) {
        if (declared.some((t) => text.includes(t))) offenders.push(`${file}: ${JSON.stringify(text.slice(0, 80))}`);
      }
      // jobs are queued by declaration (enqueue) or by a crontab task's declared name (run now), never by a literal
      if (/add_job\(\s*['"]/.test(readFileSync(file, 'utf8'))) offenders.push(`${file}: add_job with a literal task`);
    }
    expect(offenders).toEqual([]);
  });

  // an undeclared task cannot be registered: the worker's task list is exactly the declared one
  it('the worker registers exactly the declared tasks', () => {
    const services = {
      sql: {} as Db,
      now: () => new Date(),
      log: makeLogger('silent'),
      pdf: null,
      mailer: { send: () => Promise.reject(new Error('none')) },
      mailFrom: 'x@y.test',
    } as unknown as JobServices;
    expect(Object.keys(taskListFor(services)).sort()).toEqual([...declared].sort());
  });

  it('the crontab is one line per declared crontab task', () => {
    expect(parseCrontab(crontab).map((c) => c.task)).toEqual(Object.values(crons).map((c) => c.task));
  });
});

describe('declared jobs at work', () => {
  let db: TestDb;
  let ws: Workspace;
  beforeAll(async () => {
    db = await testDb();
    ws = await makeWorkspace(db.sql);
  });
  afterAll(() => db.close());

  const services = (): JobServices => ({
    sql: db.sql,
    now: () => new Date(),
    log: makeLogger('silent'),
    pdf: null,
    mailer: { send: () => Promise.reject(new Error('no mail is sent here')) },
    mailFrom: 'Support <support@agency.test>',
  });
  const helpersFor = (task: string, id: string, attempts = 1, max = 1) =>
    ({ job: { id, task_identifier: task, key: null, attempts, max_attempts: max, locked_by: 'job-catalog-test' } }) as unknown as JobHelpers;

  it('enqueue takes the declaration: key, queue and attempts come from it, the workspace is recorded from the payload', async () => {
    const payload = { workspaceId: ws.id, mailboxId: randomUUID() };
    await enqueue(db.sql, pollJob, payload);
    const [job] = await db.sql<{ task: string; key: string; queue: string; max: number; workspace: string }[]>`
      select j.task_identifier as task, j.key, j.queue_name as queue, j.max_attempts as max, q.workspace_id as workspace
      from graphile_worker.jobs j join queued_jobs q on q.job_id = j.id where j.key = ${pollJob.key(payload)}`;
    expect(job).toEqual({ task: 'mail:poll', key: `mail:poll:${payload.mailboxId}`, queue: `mailbox:${payload.mailboxId}`, max: 1, workspace: ws.id });
  });

  it('enqueue refuses a payload its job does not declare (no workspace, not a uuid), and queues nothing', async () => {
    const runId = randomUUID();
    // @ts-expect-error the payload names its workspace
    await expect(enqueue(db.sql, allocateJob, { runId })).rejects.toThrow();
    await expect(enqueue(db.sql, allocateJob, { workspaceId: ws.id, runId: 'not-a-run' })).rejects.toThrow();
    expect(await db.sql`select 1 from graphile_worker.jobs where key = ${allocateJob.key({ workspaceId: ws.id, runId })}`).toHaveLength(0);
    // a task is named by its declaration, never by a string
    const byName = () =>
      // @ts-expect-error a bare task name is not a job
      enqueue(db.sql, 'billing:allocate', { workspaceId: ws.id, runId });
    expect(byName).toBeTypeOf('function');
  });

  it('the worker checks the payload by the declaration: one that does not fit fails the attempt, recorded, before any work', async () => {
    const tasks = taskListFor(services());
    const id = String(Date.now());
    await expect(tasks[allocateJob.task]!({ runId: 'not-a-run' }, helpersFor(allocateJob.task, id))).rejects.toThrow(/does not fit its declaration/);
    const [row] = await db.sql<{ outcome: string; workspace: string | null; error: string }[]>`
      select outcome, workspace_id as workspace, error from job_history where job_id = ${id} and task = ${allocateJob.task}`;
    expect(row).toMatchObject({ outcome: 'failed', workspace: null });
    expect(row!.error).toMatch(/billing:allocate payload does not fit/);

    // one that names its workspace but not a run stays that workspace's (the console shows it to no other)
    const other = String(Date.now() + 4);
    await expect(tasks[allocateJob.task]!({ workspaceId: ws.id, runId: 'not-a-run' }, helpersFor(allocateJob.task, other))).rejects.toThrow(/does not fit/);
    expect(await db.sql`select workspace_id as workspace from job_history where job_id = ${other} and task = ${allocateJob.task}`).toEqual([
      { workspace: ws.id },
    ]);
  });

  it('a job’s history row names the workspace its payload carries (no lookup: the job was queued without a queued_jobs row)', async () => {
    const tasks = taskListFor(services());
    const id = String(Date.now() + 1);
    // a mailbox that does not exist: the poll is skipped, the job succeeds
    await tasks[pollJob.task]!({ workspaceId: ws.id, mailboxId: randomUUID() }, helpersFor(pollJob.task, id));
    const [row] = await db.sql<{ outcome: string; workspace: string }[]>`
      select outcome, workspace_id as workspace from job_history where job_id = ${id} and task = ${pollJob.task}`;
    expect(row).toEqual({ outcome: 'succeeded', workspace: ws.id });
  });

  it('the declared final-attempt rule runs when the last attempt throws, not before (billing:allocate: the run is failed)', async () => {
    const period = await makePeriod(db.sql, ws, { start: '2026-01-01', end: '2026-01-31', closed: true });
    const run = await makeBillingRun(db.sql, ws, { periodId: period.id, status: 'allocating' });
    const failing = jobTask(allocateJob, services(), () => Promise.reject(new Error('allocation broke')));
    const payload = { workspaceId: ws.id, runId: run.id };
    const status = async () => (await db.sql<{ status: string; error: string | null }[]>`select status, error from billing_runs where id = ${run.id}`)[0];

    await expect(failing(payload, helpersFor(allocateJob.task, String(Date.now() + 2), 1, allocateJob.maxAttempts))).rejects.toThrow('allocation broke');
    expect(await status()).toEqual({ status: 'allocating', error: null });
    await expect(failing(payload, helpersFor(allocateJob.task, String(Date.now() + 3), allocateJob.maxAttempts, allocateJob.maxAttempts))).rejects.toThrow(
      'allocation broke',
    );
    expect(await status()).toEqual({ status: 'failed', error: 'allocation broke' });
  });
});

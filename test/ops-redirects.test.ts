import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { safeNext } from '../src/web/session.ts';
import { login, startTestApp, type SessionCookie, type TestApp } from './helpers/app.ts';
import { makeUser, makeWorkspace } from './helpers/factories.ts';

/**
 * Issue 21: every redirect of the console goes through `safeNext` (src/web/session.ts). Before,
 * an action's `_back` field (the job and delivery forms) was followed as sent, so a form could
 * send the operator out of the console after the action ran.
 */
let app: TestApp;
let session: SessionCookie;
beforeAll(async () => {
  app = await startTestApp();
  const owner = await makeUser(app.db.sql, await makeWorkspace(app.db.sql), { role: 'owner' });
  session = await login(app, owner.email, owner.password);
});
afterAll(() => app.close());

/** A failed job of the process (no workspace: every operator sees it), as the crontab's cleanups leave one. */
async function failedJob(): Promise<string> {
  const [job] = await app.db.sql<{ id: string }[]>`
    select (graphile_worker.add_job('sessions:cleanup', '{}'::json, job_key => ${`cron-${randomUUID()}`})).id::text as id`;
  await app.db.sql`select graphile_worker.permanently_fail_jobs(${[job!.id]}::bigint[], 'cleanup failed')`;
  return job!.id;
}

const post = (path: string, form: Record<string, string>) =>
  fetch(app.base + path, {
    method: 'POST',
    redirect: 'manual',
    headers: { cookie: session.cookie, 'content-type': 'application/x-www-form-urlencoded', origin: app.base },
    body: new URLSearchParams({ _csrf: session.csrfToken, ...form }).toString(),
  });

it('a job action’s _back outside the console leads back into it, not where the form said', async () => {
  for (const back of ['/api/docs', '//evil.test/ops', 'https://evil.test/ops/jobs', '/opsx']) {
    const res = await post('/ops/jobs/retry', { jobId: await failedJob(), _back: back });
    expect(res.status).toBe(303);
    expect(res.headers.get('location')).toMatch(/^\/ops\/jobs\?msg=/);
  }
  // a console path is kept
  const jobId = await failedJob();
  // (cancel has its own confirmation page since issue 26; retry follows _back the same way)
  const kept = await post('/ops/jobs/retry', { jobId, _back: `/ops/jobs/${jobId}` });
  expect(kept.headers.get('location')).toMatch(new RegExp(`^/ops/jobs/${jobId}\\?msg=`));
}, 60_000);

it('safeNext keeps a path of its area and nothing else', () => {
  for (const ok of ['/ops', '/ops/jobs', '/ops/jobs?msg=a+b', '/ops?w=acme']) expect(safeNext(ok, '/ops', '/ops/jobs')).toBe(ok);
  for (const bad of ['', '/', '/opsx', '//ops', '//evil.test/ops', 'https://evil.test/ops', '/ops\\evil', '/ops/ x', 'javascript:alert(1)', 42, null])
    expect(safeNext(bad, '/ops', '/ops/jobs')).toBe('/ops/jobs');
});

import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './helpers/app.ts';
import { makeUser, makeWorkspace, type Person } from './helpers/factories.ts';

/**
 * Issue 19, defect 7: `/ops/login` took a form posted from another site (login CSRF: the victim's
 * browser ends up signed in as the attacker). A cross-site post is refused with a 403 page and no
 * session cookie; the console's own form still signs in.
 */
let app: TestApp;
let owner: Person;
beforeAll(async () => {
  app = await startTestApp();
  owner = await makeUser(app.db.sql, await makeWorkspace(app.db.sql), { role: 'owner' });
});
afterAll(() => app.close());

const post = (headers: Record<string, string>) =>
  fetch(`${app.base}/ops/login`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
    body: new URLSearchParams({ email: owner.email, password: owner.password, next: '/ops/jobs' }).toString(),
  });

it.each([
  ['Origin of another site', { origin: 'http://evil.test' }],
  ['Origin null (a sandboxed or redirected post)', { origin: 'null' }],
  ['Sec-Fetch-Site cross-site', { 'sec-fetch-site': 'cross-site' }],
  ['Sec-Fetch-Site same-site (a sibling subdomain)', { 'sec-fetch-site': 'same-site' }],
  ['a same-origin Origin with Sec-Fetch-Site cross-site', { 'sec-fetch-site': 'cross-site', origin: '' }],
])('refuses a sign-in form with %s: 403 page, no session cookie', async (_name, headers) => {
  const h = { ...headers } as Record<string, string>;
  if (h.origin === '') h.origin = app.base;
  const res = await post(h);
  expect(res.status).toBe(403);
  expect(res.headers.get('set-cookie')).toBeNull();
  expect(await res.text()).toContain('sent from another site');
});

it('signs in from the console’s own form (Sec-Fetch-Site same-origin, or a same Origin) and from a client that sends neither', async () => {
  // what Chromium sends from the console's page: Origin null (the no-referrer policy), Sec-Fetch-Site same-origin
  const own = [{ origin: app.base, 'sec-fetch-site': 'same-origin' }, { origin: 'null', 'sec-fetch-site': 'same-origin' }, { origin: app.base }, {}];
  for (const headers of own as Record<string, string>[]) {
    const res = await post(headers);
    expect(res.status).toBe(303);
    expect(res.headers.get('location')).toBe('/ops/jobs');
    expect(res.headers.get('set-cookie')).toMatch(/^wt_session=/);
  }
});

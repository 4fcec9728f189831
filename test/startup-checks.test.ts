import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { passwordContext } from '../src/core/mail/intake/present.ts';
import { SecretBox } from '../src/core/mail/secret-box.ts';
import { assertMailboxKey, SecretKeyMismatch } from '../src/core/mail/secret-check.ts';
import { testDb, type TestDb } from './helpers/db.ts';
import { makeWorkspace } from './helpers/factories.ts';
import { spawnRole } from './helpers/roles.ts';
import { waitUntil, type Spawned } from './helpers/spawn.ts';
import { freePort } from './setup/global.ts';

/**
 * Start-up checks of issue 26: a process whose key cannot open a stored mailbox password stops at
 * start (it used to run and poll nothing, in silence), and a process on DATABASE_URL never prints
 * the demo password (only the embedded default may).
 */
let db: TestDb;
const procs: Spawned[] = [];
const KEY = randomBytes(32).toString('hex');
const OTHER = randomBytes(32).toString('hex');

beforeAll(async () => {
  db = await testDb();
});
afterAll(async () => {
  for (const p of procs) await p.stop();
  await db.close();
});

async function addMailbox(key: string): Promise<string> {
  const ws = await makeWorkspace(db.sql);
  const sealed = new SecretBox(Buffer.from(key, 'hex')).seal('imap-password', passwordContext(ws.id));
  await db.sql`insert into mailboxes (workspace_id, host, port, secure, username, password_sealed)
               values (${ws.id}, 'imap.example.test', 993, true, 'intake', ${sealed})`;
  return ws.slug;
}

/** Runs one role until it exits by itself (a bound only against a hang: a process that starts is stopped and reported). */
async function runRole(role: 'web' | 'worker', env: Record<string, string>): Promise<{ code: number | null; output: string }> {
  const p = spawnRole(role, { DATABASE_URL: db.url, LOG_LEVEL: 'warn', CHROMIUM_PATH: '/nonexistent', SMTP_URL: 'smtp://127.0.0.1:9', ...env });
  procs.push(p);
  const code = await Promise.race([p.exited, new Promise<'running'>((r) => setTimeout(() => r('running'), 90_000))]);
  if (code === 'running') {
    await p.stop();
    return { code: null, output: `still running: ${p.output()}` };
  }
  return { code, output: p.output() };
}

describe('the mailbox key', () => {
  it('opens every stored password, or the check names the workspaces it cannot open', async () => {
    await expect(assertMailboxKey(db.sql, new SecretBox(Buffer.from(KEY, 'hex')))).resolves.toBeUndefined();
    const slug = await addMailbox(KEY);
    await expect(assertMailboxKey(db.sql, new SecretBox(Buffer.from(KEY, 'hex')))).resolves.toBeUndefined();
    const wrong = assertMailboxKey(db.sql, new SecretBox(Buffer.from(OTHER, 'hex')));
    await expect(wrong).rejects.toBeInstanceOf(SecretKeyMismatch);
    await expect(wrong).rejects.toThrow(slug);
    await expect(assertMailboxKey(db.sql, null)).rejects.toThrow(/no WT_SECRET_KEY is set/);
  });

  it('a worker with another key, or with none, stops at start saying why and how to get the key', async () => {
    const other = await runRole('worker', { WT_SECRET_KEY: OTHER, PORT: String(await freePort()) });
    expect(other.code, other.output).toBe(1);
    expect(other.output).toMatch(/cannot open the stored mailbox password of workspaces/);
    expect(other.output).toContain('npx wt embedded-env');

    const none = await runRole('web', { PORT: String(await freePort()) });
    expect(none.code, none.output).toBe(1);
    expect(none.output).toMatch(/no WT_SECRET_KEY is set/);
  }, 200_000);
});

describe('the production banner', () => {
  it('a web process on DATABASE_URL with the right key starts, links every door and prints no demo password', async () => {
    await makeWorkspace(db.sql); // the old banner printed the demo password whenever a workspace existed
    const port = await freePort();
    const web = spawnRole('web', { DATABASE_URL: db.url, LOG_LEVEL: 'warn', WT_SECRET_KEY: KEY, PORT: String(port), WORKER: 'off' });
    procs.push(web);
    await waitUntil('web /readyz', () => fetch(`http://127.0.0.1:${port}/readyz`).then((r) => r.status === 200), 90_000);
    await waitUntil('the banner', async () => web.output().includes('Health:'), 30_000);
    const out = web.output();
    expect(out).not.toContain('northwind-demo');
    expect(out).not.toContain('Demo login');
    for (const door of ['/ops', '/api/docs', '/api/openapi.json', '/mcp', '/healthz', '/readyz']) expect(out).toContain(`http://127.0.0.1:${port}${door}`);
  }, 200_000);
});

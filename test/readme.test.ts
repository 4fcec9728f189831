import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { cleanEnv, spawnGroup, waitUntil, type Spawned } from './helpers/spawn.ts';
import { freePort } from './setup/global.ts';

/**
 * The README as a newcomer follows it (issue 26): its start command, run as written (install is
 * already done) on a fresh data folder, and its first requests, run as written with curl, against
 * the started service. The commands are read out of README.md, so the README cannot drift from
 * what works without this test failing.
 */
const README = readFileSync('README.md', 'utf8');
/** The README's examples use the default address; the test's service listens on a free port. */
const README_BASE = 'http://127.0.0.1:3000';

/** The fenced blocks in `lang` (```sh, or plain for '') of the section under `heading`, up to the next heading of the same or a higher level. */
function blocks(heading: string, lang = 'sh'): string[] {
  const at = README.indexOf(`\n${heading}\n`);
  expect(at, `README has a "${heading}" section`).toBeGreaterThan(-1);
  const level = heading.split(' ')[0]!;
  const rest = README.slice(at + heading.length + 2);
  const next = rest.search(new RegExp(`\\n#{1,${level.length}} `));
  const section = next === -1 ? rest : rest.slice(0, next);
  const found: string[] = [];
  let open: { lang: string; lines: string[] } | null = null;
  for (const line of section.split('\n')) {
    if (!line.startsWith('```')) open?.lines.push(line);
    else if (!open) open = { lang: line.slice(3).trim(), lines: [] };
    else {
      if (open.lang === lang) found.push(open.lines.join('\n').trim());
      open = null;
    }
  }
  return found;
}

let started: Spawned | undefined;
let dir = '';
let base = '';
let output = '';
let token = '';
let pgPort = 0;
const sh = promisify(execFile);
/** Runs one README line with sh in the test's folder (where `cookies` lands), at the test service's address. */
const run = async (line: string, env: Record<string, string> = {}) =>
  (await sh('sh', ['-c', line.replaceAll(README_BASE, base)], { cwd: dir, env: { ...process.env, ...env } })).stdout;

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'wt-readme-'));
  await chmod(dir, 0o777);
  const [start] = blocks('## Run it');
  expect(start).toBe('npm install && npm start');
  // install is already done: the rest of the line, as written
  const command = start!
    .split('&&')
    .map((c) => c.trim())
    .filter((c) => c !== 'npm install')
    .join(' && ');
  const port = await freePort();
  base = `http://127.0.0.1:${port}`;
  started = spawnGroup(
    'sh',
    ['-c', command],
    cleanEnv({ DATA_DIR: path.join(dir, 'data'), PORT: String(port), EMBEDDED_PG_PORT: String((pgPort = await freePort())) }),
  );
  // a bound only against a hang
  await waitUntil('the service (/readyz)', () => fetch(`${base}/readyz`).then((r) => r.status === 200), 180_000).catch((err: Error) => {
    throw new Error(`${err.message}\n${started!.output()}`);
  });
  await waitUntil('the start-up banner', async () => started!.output().includes('Health:'), 30_000);
  output = started.output();
  token = /API token: (wt_[A-Za-z0-9]{40})/.exec(output)?.[1] ?? '';
  expect(token, output).not.toBe('');
}, 240_000);

afterAll(async () => {
  await started?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

it('the banner is the one the README shows, and links the console, the reference, MCP and health', () => {
  const shown = blocks('## Run it', '')[0]!;
  const compared: string[] = [];
  for (const line of output.split('\n')) {
    const label = /^\s*(Log in|API token|Try|Everyone|Console|API reference|MCP|Health):/.exec(line);
    if (!label) continue;
    compared.push(label[1]!);
    const asShown = line.replaceAll(base, README_BASE).replaceAll(token, 'wt_…').trimEnd();
    expect(shown, `README shows the banner's "${label[1]}" line`).toContain(asShown);
  }
  expect(compared).toEqual(['Log in', 'API token', 'Try', 'Everyone', 'Console', 'API reference', 'MCP', 'Health']);
  for (const door of ['/ops', '/api/docs', '/api/openapi.json', '/mcp', '/healthz', '/readyz']) expect(output).toContain(`${base}${door}`);
  // the README links what a clone has: the service's own reference, not a file outside the repository
  expect(README).not.toContain('../shared/spec');
  expect(README).toContain('/api/docs');
  expect(README).toContain('/api/openapi.json');
});

it('GET / — where the banner points — is a page of links, not 404', async () => {
  const res = await fetch(`${base}/`);
  expect(res.status).toBe(200);
  const page = await res.text();
  for (const href of ['/ops', '/api/docs', '/api/openapi.json', '/healthz', '/readyz']) expect(page).toContain(`href="${href}"`);
  expect(page).toContain('/mcp');
});

it("the README's first requests work as written: the token read, then log in, the CSRF token, and the cookie write with X-CSRF-Token", async () => {
  const [withToken, withSession] = blocks('### First requests');
  expect(withToken).toContain('wt_…');
  const workflow = JSON.parse(await run(withToken!.replaceAll('wt_…', token)));
  expect(workflow.error, JSON.stringify(workflow)).toBeUndefined();

  const [login, session, write, ...more] = withSession!.split('\n');
  expect(more).toEqual([]);
  expect(login).toMatch(/^CSRF=\$\(curl .*\/api\/auth\/login/);
  const csrf = (await run(`${login}\nprintf %s "$CSRF"`)).trim();
  expect(csrf).toMatch(/^\S{16,}$/);
  // GET /api/auth/session answers the same token again
  expect(JSON.parse(await run(session!)).csrfToken).toBe(csrf);

  // the write without the header is refused: that is why the README shows it
  expect(write).toContain('-H "X-CSRF-Token: $CSRF"');
  const refused = JSON.parse(await run(write!.replace(' -H "X-CSRF-Token: $CSRF"', ''), { CSRF: csrf }));
  expect(refused.error).toMatchObject({ code: 'forbidden', details: { reason: 'csrf' } });

  const created = JSON.parse(await run(write!, { CSRF: csrf }));
  const title = /"title":"([^"]+)"/.exec(write!)![1];
  expect(created, JSON.stringify(created)).toMatchObject({ title });
});

it('`npx wt embedded-env` prints the embedded DATABASE_URL and the key the README says it does', async () => {
  expect(README).toContain('npx wt embedded-env');
  const { stdout } = await sh('sh', ['-c', 'npx wt embedded-env'], {
    env: cleanEnv({ DATA_DIR: path.join(dir, 'data'), EMBEDDED_PG_PORT: String(pgPort) }),
  }).catch((err: { stdout: string; stderr: string }) => ({ stdout: `${err.stdout}${err.stderr}` }));
  expect(stdout).toMatch(/^DATABASE_URL=postgres:\/\/\S+\/worktracker$/m);
  expect(stdout).toMatch(/^WT_SECRET_KEY=[0-9a-f]{64}$/m);
  expect(stdout).toContain(readFileSync(path.join(dir, 'data', 'secret.key'), 'utf8').trim());
}, 120_000);

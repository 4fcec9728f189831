import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './helpers/app.ts';
import { cleanEnv, runToEnd } from './helpers/spawn.ts';

/**
 * Setting an agency up from the command line (issue 22): wt workspace create, a first owner, then
 * wt client create|list and wt project create|list, each the same operation REST runs (audited with
 * the door `cli`), refusals printed with exit code 2.
 */

const wt = path.resolve('bin/wt.js');
let app: TestApp;
let env: NodeJS.ProcessEnv;
const slug = `cli-${Date.now().toString(36)}`;

beforeAll(async () => {
  app = await startTestApp();
  env = cleanEnv({ DATABASE_URL: app.db.url, LOG_LEVEL: 'silent' });
});
afterAll(() => app.close());

const run = (...args: string[]) => runToEnd('node', [wt, ...args], env);

describe('wt client and wt project', () => {
  it('from an empty workspace: clients and projects are created and listed', { timeout: 120_000 }, async () => {
    expect((await run('workspace', 'create', '--slug', slug, '--name', 'CLI Agency')).code).toBe(0);
    const owner = await run(
      'user',
      'create',
      '--workspace',
      slug,
      '--email',
      `owner@${slug}.test`,
      '--name',
      'Olive Owner',
      '--role',
      'owner',
      '--password',
      'a long password',
    );
    expect(owner.code, owner.stderr).toBe(0);

    const acme = await run('client', 'create', '--workspace', slug, '--name', 'Acme', '--code', 'acme', '--locale', 'de-de', '--layout', 'project');
    expect(acme.code, acme.stderr).toBe(0);
    expect(JSON.parse(acme.stdout)).toMatchObject({ code: 'ACME', locale: 'de-DE', timesheetLayout: 'project', billingPolicy: 'paid' });
    expect((await run('client', 'create', '--workspace', slug, '--name', 'Globex', '--code', 'GLX')).code).toBe(0);

    const list = await run('client', 'list', '--workspace', slug);
    expect(list.code, list.stderr).toBe(0);
    expect(list.stdout.trim().split('\n')).toEqual(['ACME\tAcme\tde-DE', 'GLX\tGlobex\ten-GB']);

    const web = await run(
      'project',
      'create',
      '--workspace',
      slug,
      '--key',
      'web',
      '--name',
      'Website',
      '--client',
      'ACME',
      '--collaborators',
      'glx',
      '--mode',
      'on_close',
    );
    expect(web.code, web.stderr).toBe(0);
    const project = JSON.parse(web.stdout);
    expect(project).toMatchObject({ key: 'WEB', name: 'Website', billingMode: 'on_close', formerKeys: [] });
    expect(project.collaboratorIds).toHaveLength(1);

    const projects = await run('project', 'list', '--workspace', slug);
    expect(projects.code, projects.stderr).toBe(0);
    expect(projects.stdout.trim()).toBe('WEB\tWebsite\tACME');

    const audit = await app.db.sql<{ action: string; door: string; actor: string }[]>`
      select a.action, a.door, a.actor_name as actor from ops_audit a join workspaces w on w.id = a.workspace_id
      where w.slug = ${slug} order by a.at, a.id`;
    expect(audit).toEqual([
      { action: 'clients.create', door: 'cli', actor: 'Olive Owner' },
      { action: 'clients.create', door: 'cli', actor: 'Olive Owner' },
      { action: 'projects.create', door: 'cli', actor: 'Olive Owner' },
    ]);
  });

  it(
    'refusals are printed with exit code 2: a code taken (409), a bad layout (400), an unknown client code, a missing option',
    { timeout: 120_000 },
    async () => {
      const taken = await run('client', 'create', '--workspace', slug, '--name', 'Again', '--code', 'ACME');
      expect(taken.code).toBe(2);
      expect(taken.stderr).toContain('Another client has the code ACME');
      const layout = await run('client', 'create', '--workspace', slug, '--name', 'X', '--code', 'XX', '--layout', 'pdf');
      expect(layout.code).toBe(2);
      expect(layout.stderr).toMatch(/^wt: /);
      const unknown = await run('project', 'create', '--workspace', slug, '--key', 'APP', '--name', 'App', '--client', 'NOPE');
      expect(unknown.code).toBe(2);
      expect(unknown.stderr).toContain('no client with code NOPE');
      const missing = await run('project', 'create', '--workspace', slug, '--name', 'App');
      expect(missing.code).toBe(2);
      expect(missing.stderr).toContain('--key is required');
      const key = await run('project', 'create', '--workspace', slug, '--key', 'inbox', '--name', 'Inbox');
      expect(key.code).toBe(2);
      expect(key.stderr).toContain('INBOX is reserved');
    },
  );
});

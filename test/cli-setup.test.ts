import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './helpers/app.ts';
import { cleanEnv, runToEnd } from './helpers/spawn.ts';
import { wtHere } from './helpers/wt.ts';

/**
 * Setting an agency up from the command line (issue 22): wt workspace create, a first owner, then
 * wt client create|list, wt project create|list, wt category create|list, wt client recipients set,
 * wt project member set|remove, wt period open|close|list and wt settings set, each the same
 * operation REST runs (audited with the door `cli`), refusals printed with exit code 2.
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

/** `wt` in this process (test/helpers/wt.ts); `real` starts `node bin/wt.js`: one command of each kind, and a refusal's exit code. */
const run = (...args: string[]) => wtHere(env, args);
const real = (...args: string[]) => runToEnd('node', [wt, ...args], env);

describe('wt client and wt project', () => {
  it('from an empty workspace: clients and projects are created and listed', { timeout: 120_000 }, async () => {
    expect((await real('workspace', 'create', '--slug', slug, '--name', 'CLI Agency')).code).toBe(0);
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

    const acme = await real('client', 'create', '--workspace', slug, '--name', 'Acme', '--code', 'acme', '--locale', 'de-de', '--layout', 'project');
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
      const taken = await real('client', 'create', '--workspace', slug, '--name', 'Again', '--code', 'ACME');
      expect(taken.code).toBe(2);
      expect(taken.stderr).toContain('Another client has the code ACME');
      const layout = await run('client', 'create', '--workspace', slug, '--name', 'X', '--code', 'XX', '--layout', 'pdf');
      expect(layout.code).toBe(2);
      expect(layout.stderr).toMatch(/^wt: /);
      const unknown = await run('project', 'create', '--workspace', slug, '--key', 'APP', '--name', 'App', '--client', 'NOPE');
      expect(unknown.code).toBe(2);
      expect(unknown.stderr).toContain('wt: --client "NOPE" matches nothing; one of: ACME');
      const missing = await run('project', 'create', '--workspace', slug, '--name', 'App');
      expect(missing.code).toBe(2);
      expect(missing.stderr).toContain('--key is required');
      const key = await run('project', 'create', '--workspace', slug, '--key', 'inbox', '--name', 'Inbox');
      expect(key.code).toBe(2);
      expect(key.stderr).toContain('INBOX is reserved');
    },
  );

  it(
    'categories, recipients, project members, periods and settings: each the operation, its refusals exit 2 with its message',
    { timeout: 240_000 },
    async () => {
      const ws = ['--workspace', slug];
      const refused = async (...args: string[]) => {
        const r = await run(...args);
        expect(r.code, `wt ${args.join(' ')}: ${r.stdout}`).toBe(2);
        expect(r.stderr).toMatch(/^wt: /);
        return r.stderr;
      };
      const ok = async (...args: string[]) => {
        const r = await run(...args);
        expect(r.code, `wt ${args.join(' ')}: ${r.stderr}`).toBe(0);
        return r.stdout;
      };

      // categories
      expect(JSON.parse(await ok('category', 'create', ...ws, '--name', 'Development'))).toMatchObject({ name: 'Development' });
      expect(await refused('category', 'create', ...ws, '--name', 'development')).toContain('A category with this name exists.');
      expect(await refused('category', 'create', ...ws, '--name', 'x'.repeat(101))).toContain('wt: name: ');
      expect((await ok('category', 'list', ...ws)).trim()).toBe('Development');

      // billing recipients
      const set = JSON.parse(
        await ok('client', 'recipients', 'set', ...ws, '--client', 'acme', '--recipient', 'ap@acme.test,Accounts, payable', '--opted-out', 'old@acme.test'),
      );
      expect(set.recipients.map((r: any) => [r.email, r.name, r.optedOut])).toEqual([
        ['ap@acme.test', 'Accounts, payable', false],
        ['old@acme.test', null, true],
      ]);
      expect(await refused('client', 'recipients', 'set', ...ws, '--client', 'ACME', '--recipient', 'a@acme.test b@acme.test')).toContain(
        'A billing recipient is one bare email address',
      );
      expect(await refused('client', 'recipients', 'set', ...ws, '--client', 'ACME', '--recipient', 'a@acme.test', '--opted-out', 'A@acme.test')).toContain(
        'is listed twice',
      );
      expect(await refused('client', 'recipients', 'set', ...ws, '--client', 'ACME', '--client-user', `owner@${slug}.test`)).toContain(
        'This person is not a user of this client.',
      );
      expect(await refused('client', 'recipients', 'set', ...ws, '--client', 'NOPE', '--recipient', 'a@acme.test')).toContain(
        'wt: --client "NOPE" matches nothing; one of: ACME',
      );
      expect(await refused('client', 'recipients', 'set', ...ws, '--client', 'ACME')).toContain('or --none alone');
      expect(await refused('client', 'recipients', 'set', ...ws, '--client', 'ACME', '--none', '--recipient', 'a@acme.test')).toContain('or --none alone');
      // a refusal changed nothing; --none empties the set
      expect(JSON.parse(await ok('client', 'recipients', 'set', ...ws, '--client', 'ACME', '--none'))).toEqual({ recipients: [] });

      // project members: workspace users only, by a key the project has
      const clientUser = await run('user', 'create', ...ws, '--email', `cleo@${slug}.test`, '--name', 'Cleo Client', '--role', 'client', '--client', 'ACME');
      expect(clientUser.code, clientUser.stderr).toBe(0);
      const owner = `owner@${slug}.test`;
      expect(
        JSON.parse(await ok('project', 'member', 'set', ...ws, '--project', 'web', '--email', owner, '--access', 'full', '--category', 'development')),
      ).toMatchObject({
        name: 'Olive Owner',
        access: 'full',
        manager: false,
        categoryId: expect.any(String),
      });
      expect(await refused('project', 'member', 'set', ...ws, '--project', 'WEB', '--email', owner, '--access', 'admin')).toContain('wt: access: ');
      expect(await refused('project', 'member', 'set', ...ws, '--project', 'WEB', '--email', owner)).toContain('--access is required');
      expect(await refused('project', 'member', 'set', ...ws, '--project', 'NOPE', '--email', owner, '--access', 'full')).toContain(
        'wt: --project "NOPE" matches nothing; one of: WEB',
      );
      expect(await refused('project', 'member', 'set', ...ws, '--project', 'WEB', '--email', `nobody@${slug}.test`, '--access', 'full')).toContain(
        `wt: --email "nobody@${slug}.test" matches nothing; one of: ${owner}`,
      );
      expect(await refused('project', 'member', 'set', ...ws, '--project', 'WEB', '--email', `cleo@${slug}.test`, '--access', 'full')).toContain(
        'client users are not project members',
      );
      expect(await refused('project', 'member', 'set', ...ws, '--project', 'WEB', '--email', owner, '--access', 'full', '--category', 'Design')).toContain(
        'wt: --category "Design" matches nothing; one of: Development',
      );
      expect(JSON.parse(await ok('project', 'member', 'remove', ...ws, '--project', 'WEB', '--email', owner))).toEqual({ ok: true });
      expect(await refused('project', 'member', 'remove', ...ws, '--project', 'WEB', '--email', owner)).toContain(
        'This person is not a member of the project.',
      );
      expect(await refused('project', 'member', 'remove', ...ws, '--project', 'NOPE', '--email', owner)).toContain(
        'wt: --project "NOPE" matches nothing; one of: WEB',
      );

      // periods: the first starts where --start says, the next only where the last one ended
      expect(await refused('period', 'open', ...ws, '--start', '2026-13-01')).toContain('wt: periodStart: ');
      expect(JSON.parse(await ok('period', 'open', ...ws, '--start', '2026-01-01'))).toMatchObject({
        periodStart: '2026-01-01',
        periodEnd: '2026-01-31',
        closedAt: null,
      });
      expect(await refused('period', 'open', ...ws, '--start', '2026-03-01')).toContain('The next period must start on 2026-02-01.');
      expect(await refused('period', 'close', ...ws, '--period', '2025-12')).toContain('wt: --period "2025-12" matches nothing; one of: 2026-01');
      expect(await refused('period', 'close', ...ws, '--period', 'January')).toContain('wt: --period: a period is named by the month it starts in, YYYY-MM.');
      expect(JSON.parse(await ok('period', 'close', ...ws, '--period', '2026-01')).closedAt).toEqual(expect.any(String));
      expect((await ok('period', 'list', ...ws)).trim()).toBe('2026-01-01\t2026-01-31\tclosed');

      // settings: what is left out stays, none clears
      expect(await refused('settings', 'set', ...ws, '--timezone', 'Mars/Olympus')).toContain('defaultTimezone must be an IANA time zone');
      expect(await refused('settings', 'set', ...ws, '--reply-to', 'a@b.test, c@d.test')).toContain('mailReplyTo must be exactly one bare email address.');
      expect(await refused('settings', 'set', ...ws, '--weekly-target', 'lots')).toContain('wt: defaultWeeklyTargetMinutes: ');
      expect(
        JSON.parse(await ok('settings', 'set', ...ws, '--timezone', 'europe/berlin', '--weekly-target', '2400', '--reply-to', `office@${slug}.test`)),
      ).toMatchObject({ name: 'CLI Agency', defaultTimezone: 'Europe/Berlin', defaultWeeklyTargetMinutes: 2400, mailReplyTo: `office@${slug}.test` });
      expect(JSON.parse(await ok('settings', 'set', ...ws, '--weekly-target', 'none', '--reply-to', 'none'))).toMatchObject({
        defaultTimezone: 'Europe/Berlin',
        defaultWeeklyTargetMinutes: null,
        mailReplyTo: null,
      });

      // each write audited with the door cli
      const audit = await app.db.sql<{ action: string; outcome: string }[]>`
        select distinct a.action, a.outcome from ops_audit a join workspaces w on w.id = a.workspace_id
        where w.slug = ${slug} and a.door = 'cli'`;
      expect(audit.map((r) => `${r.action}:${r.outcome}`)).toEqual(
        expect.arrayContaining([
          'categories.create:succeeded',
          'clients.recipients.set:succeeded',
          'projects.members.set:succeeded',
          'projects.members.remove:succeeded',
          'settings.update:succeeded',
        ]),
      );
    },
  );
});

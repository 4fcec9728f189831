import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { loadConfig, ConfigError } from '../config.ts';
import { scopes as allScopes, type Role, type Scope } from '../core/auth/principal.ts';
import { issueToken } from '../core/auth/tokens.ts';
import { operatorPrincipal } from '../core/auth/operator.ts';
import { startRun } from '../core/billing/start.ts';
import { voidRun } from '../core/billing/void.ts';
import { resendDelivery } from '../core/documents/resend.ts';
import { makeCtx } from '../core/ctx.ts';
import { AppError } from '../core/errors.ts';
import { ensureDemo } from '../core/demo/seed.ts';
import { requestPoll } from '../core/mail/intake/schedule.ts';
import { setMailbox } from '../core/mail/intake/settings.ts';
import { embeddedKeyFile, loadSecretBox } from '../core/mail/secret-box.ts';
import { outboundGuardFromConfig } from '../core/net/outbound.ts';
import { changeRole } from '../core/people/role.ts';
import { addPerson } from '../core/people/users.ts';
import { createWorkspace } from '../core/workspaces/create.ts';
import { migrate } from '../db/migrate.ts';
import { openDatabase, type Database } from '../db/open.ts';
import { makeLogger } from '../log.ts';
import { serveStdio } from '../mcp/stdio.ts';

const usage = `wt — work tracker command line

  wt migrate                                   apply database migrations
  wt mcp [--toolsets a,b] [--readonly]         MCP server on stdio (token from WT_TOKEN; or WT_MCP_TOOLSETS, WT_MCP_READONLY)
  wt demo [--json]                             ensure the demo workspace; print people and fresh tokens
  wt embedded-env                              print the embedded default's DATABASE_URL and WT_SECRET_KEY (to move to your own database)
  wt workspace create --slug S --name N        create a workspace with the default workflow
  wt user create --workspace S --email E --name N --role R [--password P] [--client CODE] [--as EMAIL]
                                               add a person; for a member already there, a new role is a role change (as EMAIL)
  wt user role --workspace S --email E --role R [--client CODE] [--as EMAIL]
                                               change a member's role (audited; a client role drops the billing-operator flag)
  wt token create --workspace S --email E --name N [--scopes read,write,triage]
                  [--projects KEY,KEY] [--agent AGENT_EMAIL] [--expires ISO_DATETIME]
  wt billing run --workspace S --period YYYY-MM [--dry-run] [--as EMAIL]
                                               bill a closed period (as EMAIL, an owner or admin; default the first owner)
  wt billing void --workspace S --run ID --reason R [--as EMAIL]
                                               void a billing run (audited)
  wt delivery resend --workspace S --document ID --delivery ID [--as EMAIL]
                                               send a failed or unknown delivery again (audited)
  wt mailbox set --workspace S --host H --port P [--secure] --user U [--password-stdin] [--folder F]
                 [--after-import seen|move] [--move-to F] [--trusted-authserv-id ID] [--disabled] [--as EMAIL]
                                               connect the workspace's mailbox; the password comes from stdin
                                               or WT_MAILBOX_PASSWORD, never the command line (omit it to keep the stored one)
  wt mailbox poll --workspace S [--as EMAIL]   queue a poll of the workspace's mailbox now

DATABASE_URL selects the database; without it the embedded one under ./.data is used.`;

class UsageError extends Error {}

function need(values: Record<string, unknown>, name: string): string {
  const v = values[name];
  if (typeof v !== 'string' || v === '') throw new UsageError(`--${name} is required`);
  return v;
}

async function workspaceId(db: Database, slug: string): Promise<string> {
  const [w] = await db.sql<{ id: string }[]>`select id from workspaces where slug = ${slug}`;
  if (!w) throw new UsageError(`no workspace "${slug}"`);
  return w.id;
}

async function identityId(db: Database, email: string): Promise<string> {
  const [i] = await db.sql<{ id: string }[]>`select id from identities where lower(email) = lower(${email})`;
  if (!i) throw new UsageError(`no person with email ${email}`);
  return i.id;
}

async function clientOfCode(db: Database, workspace: string, code: string): Promise<string> {
  const [c] = await db.sql<{ id: string }[]>`select id from clients where workspace_id = ${workspace} and code = ${code}`;
  if (!c) throw new UsageError(`no client with code ${code}`);
  return c.id;
}

async function run(argv: string[]): Promise<void> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      json: { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
      slug: { type: 'string' },
      name: { type: 'string' },
      workspace: { type: 'string' },
      email: { type: 'string' },
      role: { type: 'string' },
      password: { type: 'string' },
      client: { type: 'string' },
      scopes: { type: 'string' },
      projects: { type: 'string' },
      agent: { type: 'string' },
      expires: { type: 'string' },
      toolsets: { type: 'string' },
      readonly: { type: 'boolean' },
      period: { type: 'string' },
      'dry-run': { type: 'boolean' },
      as: { type: 'string' },
      host: { type: 'string' },
      port: { type: 'string' },
      secure: { type: 'boolean' },
      user: { type: 'string' },
      folder: { type: 'string' },
      'after-import': { type: 'string' },
      'move-to': { type: 'string' },
      'trusted-authserv-id': { type: 'string' },
      disabled: { type: 'boolean' },
      'password-stdin': { type: 'boolean' },
      run: { type: 'string' },
      reason: { type: 'string' },
      document: { type: 'string' },
      delivery: { type: 'string' },
    },
  });
  const command = positionals.join(' ');
  if (values.help || !command) {
    console.log(usage);
    return;
  }
  const config = loadConfig();
  if (command === 'embedded-env' && config.DATABASE_URL)
    throw new UsageError("embedded-env prints the embedded default's settings: run it without DATABASE_URL");
  const log = makeLogger(process.env.LOG_LEVEL ?? 'warn', command === 'mcp');
  const db = await openDatabase(config, log, { max: 2 });
  try {
    await migrate(db.sql, db.url);
    switch (command) {
      case 'embedded-env': {
        // What a move from the embedded default to DATABASE_URL must carry: the data (dump it from this URL
        // while the embedded server runs) and the key the mailbox passwords are sealed with.
        loadSecretBox(config); // makes the key file if this data folder has none yet
        const key = config.WT_SECRET_KEY ?? readFileSync(embeddedKeyFile(config.DATA_DIR), 'utf8').trim();
        console.log(`DATABASE_URL=${db.url}\nWT_SECRET_KEY=${key}`);
        break;
      }
      case 'migrate':
        console.log('migrations applied');
        break;
      case 'mcp':
        await serveStdio(db.sql, process.env, { toolsets: values.toolsets, readonly: values.readonly });
        break;
      case 'demo': {
        const demo = await ensureDemo(db.sql);
        if (values.json) console.log(JSON.stringify(demo));
        else console.log(JSON.stringify(demo, null, 2));
        break;
      }
      case 'workspace create': {
        const id = await createWorkspace(db.sql, { slug: need(values, 'slug'), name: need(values, 'name') });
        console.log(JSON.stringify({ id, slug: values.slug }));
        break;
      }
      case 'user create': {
        const ws = await workspaceId(db, need(values, 'workspace'));
        const role = need(values, 'role') as Role;
        const clientId = values.client ? await clientOfCode(db, ws, values.client) : null;
        // re-adding a member with another role is a role change: the audited operation makes it
        const [member] = await db.sql<{ identityId: string; role: Role; clientId: string | null }[]>`
          select m.identity_id as "identityId", m.role, m.client_id as "clientId"
          from memberships m join identities i on i.id = m.identity_id where m.workspace_id = ${ws} and lower(i.email) = lower(${need(values, 'email')})`;
        if (member && (member.role !== role || member.clientId !== clientId)) {
          const ctx = makeCtx({ sql: db.sql }, await operatorPrincipal(db.sql, need(values, 'workspace'), values.as));
          await changeRole(ctx, { identityId: member.identityId, role, clientId });
        }
        const id = await addPerson(db.sql, {
          workspaceId: ws,
          email: need(values, 'email'),
          name: need(values, 'name'),
          role,
          password: values.password ?? null,
          clientId,
        });
        console.log(JSON.stringify({ id, email: values.email, role }));
        break;
      }
      case 'user role': {
        const slug = need(values, 'workspace');
        const ws = await workspaceId(db, slug);
        const clientId = values.client ? await clientOfCode(db, ws, values.client) : null;
        const ctx = makeCtx({ sql: db.sql }, await operatorPrincipal(db.sql, slug, values.as));
        console.log(JSON.stringify(await changeRole(ctx, { identityId: await identityId(db, need(values, 'email')), role: need(values, 'role'), clientId })));
        break;
      }
      case 'token create': {
        const ws = await workspaceId(db, need(values, 'workspace'));
        const creator = await identityId(db, need(values, 'email'));
        const actsAs = values.agent ? await identityId(db, values.agent) : creator;
        const scopes = (values.scopes ?? 'read,write,triage').split(',').map((s) => s.trim()) as Scope[];
        if (scopes.some((s) => !allScopes.includes(s))) throw new UsageError(`scopes are ${allScopes.join(', ')}`);
        let projectIds: string[] | null = null;
        if (values.projects) {
          const keys = values.projects.split(',').map((k) => k.trim().toUpperCase());
          const rows = await db.sql<{ id: string }[]>`select id from projects where workspace_id = ${ws} and key = any(${keys}::text[])`;
          if (rows.length !== keys.length) throw new UsageError('an unknown project key in --projects');
          projectIds = rows.map((r) => r.id);
        }
        const t = await issueToken(db.sql, {
          workspaceId: ws,
          createdBy: creator,
          actsAs,
          kind: values.agent ? 'agent' : 'delegated',
          name: need(values, 'name'),
          scopes,
          projectIds,
          expiresAt: values.expires ? new Date(values.expires) : null,
        });
        console.log(JSON.stringify(t));
        break;
      }
      case 'billing run': {
        const slug = need(values, 'workspace');
        const month = need(values, 'period');
        if (!/^\d{4}-\d{2}$/.test(month)) throw new UsageError('--period is a month, YYYY-MM');
        const ctx = makeCtx({ sql: db.sql }, await operatorPrincipal(db.sql, slug, values.as));
        const [period] = await db.sql<{ id: string }[]>`
          select id from periods where workspace_id = ${ctx.principal.workspaceId} and to_char(period_start, 'YYYY-MM') = ${month}`;
        if (!period) throw new UsageError(`no period starting in ${month}`);
        console.log(JSON.stringify(await startRun(ctx, { periodId: period.id, dryRun: values['dry-run'] ?? false }), null, 2));
        break;
      }
      case 'billing void': {
        const ctx = makeCtx({ sql: db.sql }, await operatorPrincipal(db.sql, need(values, 'workspace'), values.as));
        console.log(JSON.stringify(await voidRun(ctx, { runId: need(values, 'run'), reason: need(values, 'reason') }), null, 2));
        break;
      }
      case 'delivery resend': {
        const ctx = makeCtx({ sql: db.sql }, await operatorPrincipal(db.sql, need(values, 'workspace'), values.as));
        console.log(JSON.stringify(await resendDelivery(ctx, { documentId: need(values, 'document'), deliveryId: need(values, 'delivery') })));
        break;
      }
      case 'mailbox set': {
        if (values.password !== undefined) throw new UsageError('give the mailbox password on stdin (--password-stdin) or in WT_MAILBOX_PASSWORD');
        const password = values['password-stdin'] ? readFileSync(0, 'utf8').split(/\r?\n/)[0] : process.env.WT_MAILBOX_PASSWORD || undefined;
        const ctx = makeCtx({ sql: db.sql }, await operatorPrincipal(db.sql, need(values, 'workspace'), values.as));
        const mailbox = await setMailbox(
          ctx,
          {
            host: need(values, 'host'),
            port: Number(need(values, 'port')),
            secure: values.secure ?? false,
            user: need(values, 'user'),
            password,
            folder: values.folder,
            afterImport: values['after-import'],
            moveTo: values['move-to'],
            trustedAuthservId: values['trusted-authserv-id'],
            enabled: !values.disabled,
          },
          loadSecretBox(config),
          outboundGuardFromConfig(config),
        );
        console.log(JSON.stringify(mailbox, null, 2));
        break;
      }
      case 'mailbox poll': {
        const ctx = makeCtx({ sql: db.sql }, await operatorPrincipal(db.sql, need(values, 'workspace'), values.as));
        console.log(JSON.stringify(await requestPoll(ctx)));
        break;
      }
      default:
        throw new UsageError(`unknown command "${command}"`);
    }
  } finally {
    await db.close();
  }
}

run(process.argv.slice(2)).then(
  () => process.exit(0),
  (err: unknown) => {
    if (err instanceof UsageError || err instanceof ConfigError || err instanceof AppError) {
      console.error(`wt: ${err.message}`);
      process.exit(2);
    }
    console.error(err);
    process.exit(1);
  },
);

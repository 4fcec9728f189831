import { readFileSync } from 'node:fs';
import type { Config } from '../config.ts';
import { isAdminRole, scopes as allScopes, type Role, type Scope } from '../core/auth/principal.ts';
import { issueToken } from '../core/auth/tokens.ts';
import { operatorPrincipal } from '../core/auth/operator.ts';
import { approveRun } from '../core/billing/approve.ts';
import { getRun } from '../core/billing/list.ts';
import type { BillingRun } from '../core/billing/present.ts';
import { startRun, type RunPreview } from '../core/billing/start.ts';
import { voidRun } from '../core/billing/void.ts';
import { resendDelivery } from '../core/documents/resend.ts';
import { makeCtx, type Ctx } from '../core/ctx.ts';
import { ensureDemo } from '../core/demo/seed.ts';
import { requestPoll } from '../core/mail/intake/schedule.ts';
import { setMailbox } from '../core/mail/intake/settings.ts';
import type { MailboxMachinery } from '../core/mail/machinery.ts';
import { embeddedKeyFile, loadSecretBox } from '../core/mail/secret-box.ts';
import { outboundGuardFromConfig } from '../core/net/outbound.ts';
import { runOp, type AnyOperation, type OperationInput, type OperationResult } from '../core/operation.ts';
import { createClient } from '../core/clients/create.ts';
import { listClients } from '../core/clients/list.ts';
import { createInvitation, inviteFirstOwner, parseFirstOwner } from '../core/people/invite.ts';
import { changeRole } from '../core/people/role.ts';
import { updateMember } from '../core/people/update-member.ts';
import { setRecipients } from '../core/clients/recipients.ts';
import { closePeriod, listPeriods, openPeriod } from '../core/periods/manage.ts';
import { createProject } from '../core/projects/create.ts';
import { listProjects } from '../core/projects/list.ts';
import { removeProjectMember, setProjectMember } from '../core/projects/members.ts';
import { listRates } from '../core/rates/list.ts';
import { decimalToMinor, minorToDecimal } from '../core/rates/money.ts';
import { replaceRates } from '../core/rates/replace.ts';
import { createCategory, listCategories } from '../core/time/categories.ts';
import { updateSettings } from '../core/workspaces/settings.ts';
import { addPerson } from '../core/people/users.ts';
import { resolveCategoryId } from '../core/resolve/categories.ts';
import { resolvePeriodId } from '../core/resolve/periods.ts';
import { resolvePersonId } from '../core/resolve/people.ts';
import { resolveClientId, resolveProjectId } from '../core/resolve/projects.ts';
import { clientOfCode, identityOfEmail, memberOfEmail, memberRole, projectIdsOfKeys, workspaceOfSlug } from '../core/setup/names.ts';
import { createWorkspace } from '../core/workspaces/create.ts';
import type { Database } from '../db/open.ts';

/**
 * The commands of `wt`, as a table. A command that performs a service operation names it and
 * builds its typed input; the one runner (`runCommand`) calls `runOp` with the CLI's principal
 * (`operatorPrincipal`: the workspace's first owner, or `--as`; door `cli`), so authorization,
 * parsing and audit are the operation's, as through every other door. The rest are marked:
 * `process` commands run a process or touch the database's shape, not the service (migrate, MCP
 * on stdio, the embedded settings); `setup` commands write as the machine's operator before
 * anyone can sign in (a workspace, its people, their tokens, the demo), with no principal to
 * authorize, like a seed.
 */

export class UsageError extends Error {}

/** What the command line gave: parseArgs' values. */
export type CliValues = Record<string, string | boolean | string[] | undefined>;

/** What a command runs with, built by the composition root (src/cli/main.ts). */
export interface CliEnv {
  db: Database;
  config: Config;
  values: CliValues;
  /** The process's environment (WT_MAILBOX_PASSWORD, the MCP token): read by the root, handed in. */
  env: NodeJS.ProcessEnv;
  /** MCP on stdio (src/mcp), wired by the root: the CLI imports no other adapter. */
  serveStdio: (options: { toolsets?: string; readonly?: boolean }) => Promise<void>;
  print: (line: string) => void;
}

export interface OperationCommand<O extends AnyOperation = AnyOperation> {
  kind: 'operation';
  op: O;
  /** The operation's input from the command line (names resolved to ids with the caller's context). */
  input: (e: CliEnv, ctx: Ctx) => Promise<OperationInput<O>> | OperationInput<O>;
  /** What the command prints; JSON of the result by default. */
  print?: (result: OperationResult<O>) => string;
  /** What follows the operation, as the same principal (further operations through runOp): its result is what is printed. */
  then?: (e: CliEnv, ctx: Ctx, result: OperationResult<O>) => Promise<OperationResult<O>>;
  /** What the operation reads of the process beyond the database (the mailbox's sealing key and outbound guard). */
  machinery?: (e: CliEnv) => { mailbox?: MailboxMachinery };
}

/** A command that runs no service operation: why is said in the table's comment. */
export interface PlainCommand {
  kind: 'process' | 'setup';
  run: (e: CliEnv) => Promise<void>;
}

export type Command = OperationCommand | PlainCommand;

const command = <O extends AnyOperation>(c: Omit<OperationCommand<O>, 'kind'>): OperationCommand<O> => ({ kind: 'operation', ...c });

export function need(values: CliValues, name: string): string {
  const v = values[name];
  if (typeof v !== 'string' || v === '') throw new UsageError(`--${name} is required`);
  return v;
}
const opt = (values: CliValues, name: string): string | undefined => (typeof values[name] === 'string' ? (values[name] as string) : undefined);
const flag = (values: CliValues, name: string): boolean | undefined => (typeof values[name] === 'boolean' ? (values[name] as boolean) : undefined);
/** A repeatable option (`multiple: true` in main.ts): every value, in the order given. */
const many = (values: CliValues, name: string): string[] => {
  const v = values[name];
  return Array.isArray(v) ? v : typeof v === 'string' ? [v] : [];
};
/** `none` clears a nullable setting; an option left out leaves it as it is. */
const orNone = (v: string | undefined): string | null | undefined => (v === 'none' ? null : v);

/** Names a person types, resolved as MCP resolves them (src/core/resolve), as the CLI's principal. */
const client = (ctx: Ctx, code: string) => resolveClientId(ctx, code, '--client');
const person = (ctx: Ctx, email: string, field = '--email') => resolvePersonId(ctx, email, field, { history: true });
const project = (ctx: Ctx, key: string) => resolveProjectId(ctx, key, '--project');
const category = (ctx: Ctx, name: string): Promise<string | null> => (name === 'none' ? Promise.resolve(null) : resolveCategoryId(ctx, name, '--category'));
const period = (ctx: Ctx, month: string) => resolvePeriodId(ctx, month, '--period');

const RATE_KEYS = ['category', 'currency', 'hourly', 'from', 'client', 'project'] as const;

/**
 * `category=NAME,currency=EUR,hourly=95.50,from=YYYY-MM-DD[,client=CODE|project=KEY]` as one rate:
 * names resolved as the CLI's principal, the amount typed in major units made exact minor units
 * (decimalToMinor); a key may hold commas (a category's name), since only `,key=` starts the next.
 */
async function rateOf(ctx: Ctx, spec: string): Promise<OperationInput<typeof replaceRates>['rates'][number]> {
  const fields: Record<string, string> = {};
  for (const part of spec.split(new RegExp(`,(?=(?:${RATE_KEYS.join('|')})=)`))) {
    const at = part.indexOf('=');
    const key = part.slice(0, at).trim();
    if (at < 0 || !(RATE_KEYS as readonly string[]).includes(key)) throw new UsageError(`--rate ${spec}: parts are ${RATE_KEYS.join('=…, ')}=…`);
    fields[key] = part.slice(at + 1).trim();
  }
  for (const key of ['category', 'currency', 'hourly', 'from'] as const) if (!fields[key]) throw new UsageError(`--rate ${spec}: ${key}= is required`);
  return {
    categoryId: (await category(ctx, fields.category!)) ?? '',
    clientId: fields.client ? await client(ctx, fields.client) : null,
    projectId: fields.project ? await project(ctx, fields.project) : null,
    currency: fields.currency!,
    hourlyRateMinor: decimalToMinor(fields.hourly!, fields.currency!),
    effectiveFrom: fields.from!,
  };
}

const scopeLabel = (r: { clientCode: string | null; projectKey: string | null }) =>
  r.projectKey ? `project ${r.projectKey}` : r.clientCode ? `client ${r.clientCode}` : 'default';

/** The set-up commands' lookups (before anyone acts): the refusal worded for the command line. */
async function found<T>(value: Promise<T | null>, refusal: string): Promise<T> {
  const v = await value;
  if (v === null) throw new UsageError(refusal);
  return v;
}

/** `EMAIL[,NAME]`: the name is everything after the first comma (an address has none). */
function addressAndName(spec: string): { email: string; name: string | null } {
  const at = spec.indexOf(',');
  if (at === -1) return { email: spec, name: null };
  const name = spec.slice(at + 1).trim();
  return { email: spec.slice(0, at), name: name === '' ? null : name };
}

/** The CLI's caller in `--workspace`: its first owner, or `--as EMAIL` (door `cli`). */
const cliCtx = async ({ db, values }: CliEnv, extra: Partial<Ctx> = {}): Promise<Ctx> => ({
  ...makeCtx({ sql: db.sql }, await operatorPrincipal(db.sql, need(values, 'workspace'), opt(values, 'as'))),
  ...extra,
});

const pretty = (r: unknown) => JSON.stringify(r, null, 2);

export const COMMANDS: Record<string, Command> = {
  // process: the database's shape, not the service
  migrate: { kind: 'process', run: async ({ print }) => print('migrations applied') },
  // process: MCP on stdio, each tool call its operation through runOp (src/mcp)
  mcp: { kind: 'process', run: ({ values, serveStdio }) => serveStdio({ toolsets: opt(values, 'toolsets'), readonly: flag(values, 'readonly') }) },
  // process: what a move from the embedded default to DATABASE_URL must carry: the data (dump it from
  // this URL while the embedded server runs) and the key the mailbox passwords are sealed with
  'embedded-env': {
    kind: 'process',
    run: async ({ db, config, print }) => {
      loadSecretBox(config); // makes the key file if this data folder has none yet
      const key = config.WT_SECRET_KEY ?? readFileSync(embeddedKeyFile(config.DATA_DIR), 'utf8').trim();
      print(`DATABASE_URL=${db.url}\nWT_SECRET_KEY=${key}`);
    },
  },
  // setup: the demo workspace, seeded as the machine's operator
  demo: {
    kind: 'setup',
    run: async ({ db, values, print }) => {
      const demo = await ensureDemo(db.sql);
      print(values.json ? JSON.stringify(demo) : pretty(demo));
    },
  },
  // setup: a workspace has no one to authorize before it exists; --owner invites its first Owner by
  // email (the worker sends the link), so the Owner's password never goes on a command line
  'workspace create': {
    kind: 'setup',
    run: async ({ db, values, print }) => {
      const email = opt(values, 'owner');
      const owner = email ? parseFirstOwner({ email, name: need(values, 'owner-name') }) : null;
      const id = await createWorkspace(db.sql, { slug: need(values, 'slug'), name: need(values, 'name') });
      const invitationId = owner ? await inviteFirstOwner(db.sql, id, owner) : undefined;
      print(JSON.stringify({ id, slug: values.slug, ...(invitationId ? { ownerInvitationId: invitationId } : {}) }));
    },
  },
  // setup: its people (the first owner included); re-adding a member with another role is a role
  // change, which the audited operation makes, through runOp as the CLI's principal
  'user create': {
    kind: 'setup',
    run: async (e) => {
      const { db, values, print } = e;
      const ws = await found(workspaceOfSlug(db.sql, need(values, 'workspace')), `no workspace "${need(values, 'workspace')}"`);
      const role = need(values, 'role') as Role;
      const code = opt(values, 'client');
      const clientId = code ? await found(clientOfCode(db.sql, ws, code), `no client with code ${code}`) : null;
      const member = await memberOfEmail(db.sql, ws, need(values, 'email'));
      if (member && (member.role !== role || member.clientId !== clientId)) {
        await runOp(changeRole, await cliCtx(e), { identityId: member.identityId, role, clientId });
      }
      const id = await addPerson(db.sql, {
        workspaceId: ws,
        email: need(values, 'email'),
        name: need(values, 'name'),
        role,
        password: opt(values, 'password') ?? null,
        clientId,
      });
      print(JSON.stringify({ id, email: values.email, role }));
    },
  },
  'user role': command({
    op: changeRole,
    input: async ({ values }, ctx) => {
      const code = opt(values, 'client');
      const clientId = code ? await client(ctx, code) : null;
      return { identityId: await person(ctx, need(values, 'email')), role: need(values, 'role') as Role, clientId };
    },
    print: (r) => JSON.stringify(r),
  }),
  // an invitation by email, as POST /invitations: the worker sends it (the local outbox on the embedded default)
  invite: command({
    op: createInvitation,
    input: async ({ values }, ctx) => {
      const code = opt(values, 'client');
      return {
        email: need(values, 'email'),
        name: need(values, 'name'),
        // as typed: the operation's schema decides what it is
        role: need(values, 'role') as OperationInput<typeof createInvitation>['role'],
        clientId: code ? await client(ctx, code) : null,
      };
    },
    print: (r) => JSON.stringify(r),
  }),
  // a member's role, client and time settings, as PATCH /members/{id}; an option left out is left as it is
  'member set': command({
    op: updateMember,
    input: async ({ values }, ctx) => {
      const code = opt(values, 'client');
      const name = opt(values, 'category');
      const target = opt(values, 'weekly-target');
      const categoryId = name === undefined ? undefined : await category(ctx, name);
      return {
        identityId: await person(ctx, need(values, 'email')),
        // as typed: the operation's schema decides what it is
        role: opt(values, 'role') as OperationInput<typeof updateMember>['role'],
        clientId: code === 'none' ? null : code ? await client(ctx, code) : undefined,
        timezone: opt(values, 'timezone'),
        weeklyTargetMinutes: target === undefined ? undefined : target === 'none' ? null : Number(target),
        categoryId,
      };
    },
    print: (r) => JSON.stringify(r),
  }),
  // setup: tokens for people of a workspace, issued by the machine's operator (REST's token routes are the operation)
  'token create': {
    kind: 'setup',
    run: async ({ db, values, print }) => {
      const ws = await found(workspaceOfSlug(db.sql, need(values, 'workspace')), `no workspace "${need(values, 'workspace')}"`);
      const creator = await found(identityOfEmail(db.sql, need(values, 'email')), `no person with email ${need(values, 'email')}`);
      const agent = opt(values, 'agent');
      const actsAs = agent ? await found(identityOfEmail(db.sql, agent), `no person with email ${agent}`) : creator;
      const scopes = (opt(values, 'scopes') ?? 'read,write,triage').split(',').map((s) => s.trim()) as Scope[];
      if (scopes.some((s) => !allScopes.includes(s))) throw new UsageError(`scopes are ${allScopes.join(', ')}`);
      // as POST /tokens: only an Owner or Admin holds an admin-scoped token
      const holder = await memberRole(db.sql, ws, actsAs);
      if (scopes.includes('admin') && !(holder && isAdminRole(holder))) throw new UsageError('only an owner or admin may hold an admin-scoped token');
      let projectIds: string[] | null = null;
      const projects = opt(values, 'projects');
      if (projects) {
        const keys = projects.split(',').map((k) => k.trim().toUpperCase());
        projectIds = await found(projectIdsOfKeys(db.sql, ws, keys), 'an unknown project key in --projects');
      }
      const expires = opt(values, 'expires');
      const t = await issueToken(db.sql, {
        workspaceId: ws,
        createdBy: creator,
        actsAs,
        kind: agent ? 'agent' : 'delegated',
        name: need(values, 'name'),
        scopes,
        projectIds,
        expiresAt: expires ? new Date(expires) : null,
      });
      print(JSON.stringify(t));
    },
  },
  'billing run': command({
    op: startRun,
    input: async ({ values }, ctx) => {
      const periodId = await period(ctx, need(values, 'period'));
      return { periodId, dryRun: flag(values, 'dry-run') ?? false };
    },
    then: (e, ctx, started) => followRun(e, ctx, started),
    print: pretty,
  }),
  'billing approve': command({
    op: approveRun,
    input: ({ values }) => ({ id: need(values, 'run') }),
    then: (e, ctx, approved) => followRun(e, ctx, approved) as Promise<BillingRun>,
    print: pretty,
  }),
  'billing void': command({
    op: voidRun,
    input: ({ values }) => ({ id: need(values, 'run'), reason: need(values, 'reason') }),
    print: pretty,
  }),
  'delivery resend': command({
    op: resendDelivery,
    input: ({ values }) => ({ id: need(values, 'document'), deliveryId: need(values, 'delivery') }),
    print: (r) => JSON.stringify(r),
  }),
  'mailbox set': command({
    op: setMailbox,
    machinery: ({ config }) => ({ mailbox: { secrets: loadSecretBox(config), outbound: outboundGuardFromConfig(config) } }),
    input: ({ values, env }) => {
      if (values.password !== undefined) throw new UsageError('give the mailbox password on stdin (--password-stdin) or in WT_MAILBOX_PASSWORD');
      const password = values['password-stdin'] ? readFileSync(0, 'utf8').split(/\r?\n/)[0] : env.WT_MAILBOX_PASSWORD || undefined;
      return {
        host: need(values, 'host'),
        port: Number(need(values, 'port')),
        secure: flag(values, 'secure') ?? false,
        user: need(values, 'user'),
        password,
        folder: opt(values, 'folder'),
        // as typed: the operation's schema decides what it is (400 for anything but seen or move)
        afterImport: opt(values, 'after-import') as OperationInput<typeof setMailbox>['afterImport'],
        moveTo: opt(values, 'move-to'),
        trustedAuthservId: opt(values, 'trusted-authserv-id'),
        enabled: !values.disabled,
      };
    },
    print: pretty,
  }),
  'mailbox poll': command({ op: requestPoll, input: () => ({}), print: (r) => JSON.stringify(r) }),
  // clients and projects, as POST/GET /clients and /projects (issue 22): provisioning and recovery
  'client create': command({
    op: createClient,
    input: ({ values }) => ({
      name: need(values, 'name'),
      code: need(values, 'code'),
      locale: opt(values, 'locale'),
      // as typed: the operation's schema decides what they are
      timesheetLayout: opt(values, 'layout') as OperationInput<typeof createClient>['timesheetLayout'],
      billingPolicy: opt(values, 'policy'),
      billingMode: opt(values, 'mode') as OperationInput<typeof createClient>['billingMode'],
    }),
    print: (r) => JSON.stringify(r),
  }),
  'client list': command({
    op: listClients,
    input: ({ values }) => ({ archived: values.archived ? ('all' as const) : ('false' as const) }),
    print: (r) => r.clients.map((c) => `${c.code}\t${c.name}\t${c.locale}${c.archivedAt ? '\tarchived' : ''}`).join('\n') || 'no clients',
  }),
  'project create': command({
    op: createProject,
    input: async ({ values }, ctx) => {
      const code = opt(values, 'client');
      const collaborators = opt(values, 'collaborators');
      return {
        key: need(values, 'key'),
        name: need(values, 'name'),
        billingClientId: code ? await client(ctx, code) : null,
        collaboratorIds: collaborators ? await Promise.all(collaborators.split(',').map((c) => resolveClientId(ctx, c.trim(), '--collaborators'))) : [],
        billingPolicy: opt(values, 'policy') ?? null,
        billingMode: (opt(values, 'mode') ?? null) as OperationInput<typeof createProject>['billingMode'],
      };
    },
    print: (r) => JSON.stringify(r),
  }),
  'project list': command({
    op: listProjects,
    input: () => ({}),
    print: (r) => r.projects.map((p) => `${p.key}\t${p.name}${p.billingClient ? `\t${p.billingClient.code}` : ''}`).join('\n') || 'no projects',
  }),
  // who receives a client's timesheets, as PUT /clients/{id}/recipients: the whole set, replacing the
  // current one, in this order: client users (--client-user EMAIL: their own address), addresses
  // (--recipient EMAIL[,NAME]), then addresses listed but sent nothing (--opted-out EMAIL[,NAME]);
  // --none empties it (never an empty set by leaving every option out)
  'client recipients set': command({
    op: setRecipients,
    input: async ({ values }, ctx) => {
      const users = many(values, 'client-user');
      const sent = many(values, 'recipient');
      const optedOut = many(values, 'opted-out');
      const none = flag(values, 'none') ?? false;
      const given = users.length + sent.length + optedOut.length;
      if (none ? given > 0 : given === 0)
        throw new UsageError('give --recipient EMAIL[,NAME], --client-user EMAIL or --opted-out EMAIL[,NAME] (repeatable), or --none alone');
      return {
        id: await client(ctx, need(values, 'client')),
        recipients: [
          ...(await Promise.all(users.map(async (email) => ({ identityId: await person(ctx, email, '--client-user'), optedOut: false })))),
          ...sent.map((spec) => ({ ...addressAndName(spec), optedOut: false })),
          ...optedOut.map((spec) => ({ ...addressAndName(spec), optedOut: true })),
        ],
      };
    },
    print: (r) => JSON.stringify(r),
  }),
  // a project's members, as PUT and DELETE /projects/{id}/members/{identityId}: set is the whole
  // membership (access, manager, category), so an option left out is its default, not kept
  'project member set': command({
    op: setProjectMember,
    input: async ({ values }, ctx) => {
      const name = opt(values, 'category');
      return {
        id: await project(ctx, need(values, 'project')),
        identityId: await person(ctx, need(values, 'email')),
        // as typed: the operation's schema decides what it is
        access: need(values, 'access') as OperationInput<typeof setProjectMember>['access'],
        manager: flag(values, 'manager') ?? false,
        categoryId: name === undefined ? null : await category(ctx, name),
      };
    },
    print: (r) => JSON.stringify(r),
  }),
  'project member remove': command({
    op: removeProjectMember,
    input: async ({ values }, ctx) => ({
      id: await project(ctx, need(values, 'project')),
      identityId: await person(ctx, need(values, 'email')),
    }),
    print: (r) => JSON.stringify(r),
  }),
  // consultant categories, as POST and GET /categories
  'category create': command({
    op: createCategory,
    input: ({ values }) => ({ name: need(values, 'name') }),
    print: (r) => JSON.stringify(r),
  }),
  'category list': command({
    op: listCategories,
    input: () => ({}),
    print: (r) => r.categories.map((c) => c.name).join('\n') || 'no categories',
  }),
  // hourly rates, as GET and PUT /rates (issue 23): `set` replaces the whole table with the --rate options given (--none empties it)
  'rates list': command({
    op: listRates,
    input: () => ({}),
    print: (r) =>
      r.rates.map((x) => [x.categoryName, scopeLabel(x), x.currency, minorToDecimal(x.hourlyRateMinor, x.currency), x.effectiveFrom].join('\t')).join('\n') ||
      'no rates',
  }),
  'rates set': command({
    op: replaceRates,
    input: async ({ values }, ctx) => {
      const specs = many(values, 'rate');
      if (values.none && specs.length) throw new UsageError('--none empties the table: give no --rate with it');
      if (!values.none && !specs.length) throw new UsageError('give the whole table as --rate options (or --none to empty it)');
      const rates = [];
      for (const spec of specs) rates.push(await rateOf(ctx, spec));
      return { rates };
    },
    print: (r) => `${r.rates.length} rate(s) saved`,
  }),
  // periods, as POST /periods and /periods/{id}/close: the next period opens after the last one
  // (--start only for the very first); a period is named by the month it starts in
  'period open': command({
    op: openPeriod,
    input: ({ values }) => ({ periodStart: opt(values, 'start') }),
    print: (r) => JSON.stringify(r),
  }),
  'period close': command({
    op: closePeriod,
    input: async ({ values }, ctx) => ({ id: await period(ctx, need(values, 'period')) }),
    print: (r) => JSON.stringify(r),
  }),
  'period list': command({
    op: listPeriods,
    input: () => ({}),
    print: (r) => r.periods.map((p) => `${p.periodStart}\t${p.periodEnd}\t${p.closedAt ? 'closed' : 'open'}`).join('\n') || 'no periods',
  }),
  // the workspace's settings, as PATCH /settings: an option left out is left as it is; none clears
  'settings set': command({
    op: updateSettings,
    input: ({ values }) => {
      const target = orNone(opt(values, 'weekly-target'));
      return {
        name: opt(values, 'name'),
        defaultTimezone: opt(values, 'timezone'),
        defaultWeeklyTargetMinutes: typeof target === 'string' ? Number(target) : target,
        mailFromName: orNone(opt(values, 'mail-from-name')),
        mailReplyTo: orNone(opt(values, 'reply-to')),
      };
    },
    print: (r) => JSON.stringify(r),
  }),
};

/** Runs one command: a process or setup command itself, an operation command through `runOp` as the CLI's principal. */
export async function runCommand(c: Command, e: CliEnv): Promise<void> {
  if (c.kind !== 'operation') return c.run(e);
  const ctx = await cliCtx(e, c.machinery?.(e));
  let result: unknown = await runOp(c.op, ctx, await c.input(e, ctx));
  if (c.then) result = await c.then(e, ctx, result);
  e.print(c.print ? c.print(result) : pretty(result));
}

/** How long `--wait` follows a run before giving up (the worker may not be running). */
const WAIT_LIMIT_MS = 30 * 60_000;

/**
 * `--wait`: follows the run (GET /billing/runs/{id}'s operation, twice a second) until it ends:
 * `completed`, `voided`, or `awaiting_approval` (it waits for an operator); `--approve` (which
 * implies `--wait`) approves it there and follows it to its end. A failed run is a refusal (exit 2)
 * naming its error; so is a run still under way after half an hour (is a worker running?).
 */
async function followRun(e: CliEnv, ctx: Ctx, started: BillingRun | RunPreview): Promise<BillingRun | RunPreview> {
  const approve = flag(e.values, 'approve') ?? false;
  if (started.dryRun || !(approve || flag(e.values, 'wait'))) return started;
  const deadline = Date.now() + WAIT_LIMIT_MS;
  let run = started;
  for (;;) {
    if (run.status === 'failed') throw new UsageError(`billing run ${run.id} failed: ${run.error ?? 'no error recorded'}`);
    if (run.status === 'awaiting_approval' && approve) run = await runOp(approveRun, ctx, { id: run.id });
    else if (['completed', 'voided'].includes(run.status) || run.status === 'awaiting_approval') return run;
    if (Date.now() > deadline) throw new UsageError(`billing run ${run.id} is still ${run.status} after 30 minutes; is a worker running?`);
    await new Promise((r) => setTimeout(r, 500));
    run = await runOp(getRun, ctx, { id: run.id });
  }
}

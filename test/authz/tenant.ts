import { randomUUID } from 'node:crypto';
import type { Db } from '../../src/db/connect.ts';
import { login } from '../helpers/app.ts';
import { VOLATILE_COLUMNS, VOLATILE_TABLE } from '../helpers/db-state.ts';
import {
  makeBillingRecipient,
  makeBillingRun,
  makeClient,
  makeDocument,
  makePeriod,
  makeProject,
  makeTicket,
  makeTimeEntry,
  makeToken,
  makeUser,
  makeWorkspace,
  type Person,
  type Workspace,
} from '../helpers/factories.ts';
import { authzWorld, type AuthzWorld, type Cred } from './world.ts';

/**
 * Tenancy: a second workspace beside the matrix's, and the strings that identify each. A response
 * to a principal of one workspace must name nothing of the other: no id, title, client name,
 * document number, email or mailbox subject, unless the caller sent that string itself (a 404 may
 * quote the id it was asked for). Human ids (`WEB-1`, `INBOX-3`) are not identifying: every
 * workspace has its own, and workspace 2's project takes workspace 1's project key on purpose, so
 * a ticket reference that resolves in the wrong workspace would show up.
 */

export interface Identifying {
  text: string;
  what: string;
}

const secret = (what: string) => `${what}-${randomUUID()}`;

/**
 * The job-produced artefacts of a workspace, seeded directly: an intake log entry, a job_history
 * attempt, an audit row, and a billed run with a combined document delivered to a recipient.
 */
export async function seedArtefacts(
  sql: Db,
  ws: Workspace,
  who: Person,
  clientId: string,
  periodStart: string,
): Promise<{ strings: Identifying[]; runId: string; documentId: string; jobId: string }> {
  const strings: Identifying[] = [];
  const note = (text: string, what: string) => strings.push({ text, what });
  const subject = secret('INTAKE');
  const from = `sender-${randomUUID()}@mail.test`;
  await sql`
    insert into intake_messages (workspace_id, dedupe_key, from_address, subject, received_at, status, reason)
    values (${ws.id}, ${randomUUID()}, ${from}, ${subject}, now(), 'quarantined', 'sender_unknown')`;
  note(subject, 'intake subject');
  note(from, 'intake sender');
  const end = new Date(Date.parse(`${periodStart}T00:00:00Z`) + 27 * 86_400_000).toISOString().slice(0, 10);
  const period = await makePeriod(sql, ws, { start: periodStart, end, closed: true, closedBy: who.id });
  const run = await makeBillingRun(sql, ws, { periodId: period.id });
  const recipient = `billing-${randomUUID()}@client.test`;
  const doc = await makeDocument(sql, ws, { runId: run.id, clientId, number: secret('DOC'), deliveries: [{ email: recipient, state: 'failed' }] });
  note(run.id, 'billing run id');
  note(doc.id, 'document id');
  note(doc.number, 'document number');
  note(recipient, 'delivery recipient');
  const jobKey = secret('JOBKEY');
  const payload = { runId: run.id, note: secret('PAYLOAD') };
  const [job] = await sql<{ jobId: string }[]>`
    insert into job_history (job_id, task, job_key, attempt, max_attempts, workspace_id, run_id, payload, outcome, error, finished_at, duration_ms)
    values (${Math.floor(Math.random() * 1e9) + 1e9}, 'billing:allocate', ${jobKey}, 1, 1, ${ws.id}, ${run.id}, ${sql.json(payload)}, 'failed', ${secret('JOBERROR')}, now(), 5)
    returning job_id::text as "jobId"`;
  note(jobKey, 'job key');
  note(payload.note, 'job payload');
  const target = secret('AUDIT');
  const row = {
    workspace_id: ws.id,
    actor_id: who.id,
    actor_name: 'Seeded operator',
    action: 'billing.run.void',
    target,
    outcome: 'succeeded',
    detail: secret('AUDITDETAIL'),
  };
  // the door column (every door names its audit) may or may not be there yet
  const [door] = await sql`select 1 from information_schema.columns where table_name = 'ops_audit' and column_name = 'door'`;
  await sql`insert into ops_audit ${sql(door ? { ...row, door: 'console' } : row)}`;
  note(target, 'audit target');
  return { strings, runId: run.id, documentId: doc.id, jobId: job!.jobId };
}

/** What identifies the matrix's workspace: its markers (not human ids), ids, people's emails and its slug. */
export function identifyingOf(w: AuthzWorld): Identifying[] {
  const out: Identifying[] = w.markers.filter((m) => !m.word).map((m) => ({ text: m.text, what: m.what }));
  const id = (text: string, what: string) => out.push({ text, what });
  id(w.ws.slug, 'workspace slug');
  id(w.ws.id, 'workspace id');
  for (const [k, t] of Object.entries(w.tickets)) id(t.id, `ticket id (${k})`);
  for (const [k, v] of Object.entries(w.comments)) id(v, `comment id (${k})`);
  for (const [k, v] of Object.entries(w.attachments)) id(v, `attachment id (${k})`);
  for (const [k, v] of Object.entries(w.entries)) id(v, `time entry id (${k})`);
  for (const [k, p] of Object.entries(w.people)) {
    id(p.id, `person id (${k})`);
    id(p.email, `email (${k})`);
  }
  id(w.clients.a, 'client id (A)');
  id(w.clients.b, 'client id (B)');
  id(w.projects.a.id, 'project id (PA)');
  id(w.projects.h.id, 'project id (PH)');
  id(w.projects.h.key, 'project key (PH)');
  id(w.documents.hiddenCombined, 'document id');
  id(w.codehost.hidden, 'code-host link id');
  id(w.states.default, 'workflow state id');
  return out;
}

/** Identifying strings of the other workspace in `text`, leaving out those the request itself carried. */
export function foreign(strings: Identifying[], text: string, request = ''): string[] {
  return strings.filter((s) => text.includes(s.text) && !request.includes(s.text)).map((s) => `${s.what} (${s.text})`);
}

export interface SecondWorkspace {
  ws: Workspace;
  people: Record<'owner' | 'admin' | 'member' | 'agent' | 'client', Person>;
  client: { id: string; name: string };
  project: { id: string; key: string };
  ticket: { id: string; humanId: string };
  runId: string;
  documentId: string;
  /** Owner, admin, member and client by session; owner, member, client and agent by token. */
  creds: Cred[];
  strings: Identifying[];
}

/**
 * Workspace 2 in the matrix's database: its own people (owner, admin, member, agent, client user),
 * a client, a project under workspace 1's project key, tickets, time, a billed run with a document
 * and a delivery, an intake log entry, a job_history attempt and an audit row.
 */
export async function secondWorkspace(w: AuthzWorld): Promise<SecondWorkspace> {
  const sql = w.app.db.sql;
  const ws = await makeWorkspace(sql);
  const clientName = secret('CLIENT2');
  const client = await makeClient(sql, ws, { name: clientName });
  const people = {
    owner: await makeUser(sql, ws, { role: 'owner', name: secret('OWNER2') }),
    admin: await makeUser(sql, ws, { role: 'admin' }),
    member: await makeUser(sql, ws, { role: 'member' }),
    agent: await makeUser(sql, ws, { role: 'agent' }),
    client: await makeUser(sql, ws, { role: 'client', clientId: client.id }),
  };
  await makeBillingRecipient(sql, client.id, people.client);
  const project = await makeProject(sql, ws, {
    key: w.projects.a.key,
    billingClientId: client.id,
    members: [
      { person: people.member, access: 'full' },
      { person: people.agent, access: 'full' },
    ],
  });
  const title = secret('TICKET2');
  const ticket = await makeTicket(sql, ws, { projectId: project.id, title, reporterId: people.client.id });
  const inbox = await makeTicket(sql, ws, { projectId: null, title: secret('INBOX2') });
  await makePeriod(sql, ws, { start: w.today.slice(0, 8) + '01', end: lastDay(w.today) });
  await makeTimeEntry(sql, ws, { ticketId: ticket.id, userId: people.member.id, spentOn: w.today, minutes: 30 });
  const art = await seedArtefacts(sql, ws, people.owner, client.id, '2001-02-01');
  const strings: Identifying[] = [
    ...art.strings,
    { text: ws.id, what: 'workspace 2 id' },
    { text: ws.slug, what: 'workspace 2 slug' },
    { text: clientName, what: 'workspace 2 client name' },
    { text: client.id, what: 'workspace 2 client id' },
    { text: title, what: 'workspace 2 ticket title' },
    { text: ticket.id, what: 'workspace 2 ticket id' },
    { text: inbox.id, what: 'workspace 2 inbox ticket id' },
    { text: project.id, what: 'workspace 2 project id' },
    ...Object.entries(people).flatMap(([k, p]) => [
      { text: p.id, what: `workspace 2 person id (${k})` },
      { text: p.email, what: `workspace 2 email (${k})` },
    ]),
  ];

  const creds: Cred[] = [];
  for (const key of ['owner', 'admin', 'member', 'client'] as const) {
    const person = people[key];
    creds.push({
      name: `ws2 ${person.role} session`,
      role: person.role,
      kind: 'session',
      scopes: [],
      allowList: false,
      person,
      session: await login(w.app, person.email, person.password),
    });
  }
  const token = async (key: 'owner' | 'member' | 'client' | 'agent', scopes: ('read' | 'write' | 'triage')[]) => {
    const person = people[key];
    const kind = key === 'agent' ? 'agent' : 'delegated';
    const t = await makeToken(sql, ws, person, { scopes, kind, createdBy: kind === 'agent' ? people.owner.id : undefined });
    creds.push({
      name: `ws2 ${person.role} ${kind} token ${scopes.join('+')}`,
      role: person.role,
      kind: kind === 'agent' ? 'agent' : 'token',
      scopes,
      allowList: false,
      person,
      token: t.token,
    });
  };
  await token('owner', ['read', 'write', 'triage']);
  await token('member', ['read', 'write']);
  await token('client', ['read', 'write']);
  await token('agent', ['read', 'write', 'triage']);
  return { ws, people, client: { id: client.id, name: clientName }, project, ticket, runId: art.runId, documentId: art.documentId, creds, strings };
}

function lastDay(isoDay: string): string {
  const d = new Date(`${isoDay.slice(0, 8)}01T00:00:00Z`);
  d.setUTCMonth(d.getUTCMonth() + 1);
  d.setUTCDate(0);
  return d.toISOString().slice(0, 10);
}

/**
 * A checksum of every row of one workspace (each table with a workspace_id column), so a request
 * made in another workspace can be shown to have changed nothing of it.
 */
// per database: a fork runs file after file with this module loaded (test/setup/per-file.ts)
const scopedOf = new WeakMap<Db, string[]>();

export async function workspaceState(sql: Db, workspaceId: string): Promise<Map<string, string>> {
  let scoped = scopedOf.get(sql);
  if (!scoped) {
    scoped = (
      await sql<{ name: string }[]>`
      select c.relname as name from pg_class c join pg_namespace n on n.oid = c.relnamespace join pg_attribute a on a.attrelid = c.oid
      where n.nspname = 'public' and c.relkind in ('r', 'p') and a.attname = 'workspace_id' and not a.attisdropped order by 1`
    )
      .map((r) => r.name)
      .filter((n) => !VOLATILE_TABLE.test(n));
    scopedOf.set(sql, scoped);
  }
  const drop = VOLATILE_COLUMNS.map((c) => ` - '${c}'`).join('');
  // Table names come from pg_class, never from input; quoted as identifiers.
  const parts = scoped.map(
    (t) => `select '${t}' as name, count(*)::text || ':' || coalesce(md5(string_agg(j, '' order by j)), '') as sum
            from (select (to_jsonb(x)${drop})::text as j from "${t.replace(/"/g, '""')}" x where x.workspace_id = $1) s`,
  );
  const rows = await sql.unsafe<{ name: string; sum: string }[]>(parts.join(' union all '), [workspaceId]);
  return new Map(rows.map((r) => [r.name, r.sum]));
}

/**
 * The world of test/authz-matrix.test.ts and test/authz-tenancy.test.ts: workspace 1 (test/authz/world.ts)
 * with its job-produced artefacts, workspace 2 beside it, and what identifies workspace 1. Both
 * files build all of it, so each half answers over the same data as when they were one file.
 */
export async function twoWorkspaces(): Promise<{ w: AuthzWorld; w2: SecondWorkspace; ws1: Identifying[] }> {
  const w = await authzWorld();
  const art = await seedArtefacts(w.app.db.sql, w.ws, w.people.owner, w.clients.b, '2001-03-01');
  const ws1 = [...identifyingOf(w), ...art.strings];
  const w2 = await secondWorkspace(w);
  // statistics as autovacuum keeps them in a running service: on a database minutes old PostgreSQL
  // still guesses, and its guesses made a few statements here quadratic in the world's tickets
  await w.app.db.sql`analyze`;
  return { w, w2, ws1 };
}

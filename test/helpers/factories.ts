import { randomBytes } from 'node:crypto';
import type { Db } from '../../src/db/connect.ts';
import type { Role, Scope } from '../../src/core/auth/principal.ts';
import { issueToken } from '../../src/core/auth/tokens.ts';
import { addPerson } from '../../src/core/people/users.ts';
import { addProjectMember, createClient, createProject, createWorkspace } from '../../src/core/workspaces/create.ts';
import { effectiveBillingPolicySql } from '../../src/core/tickets/filters.ts';

const uniq = () => randomBytes(4).toString('hex');

export interface Workspace {
  id: string;
  slug: string;
}

export async function makeWorkspace(sql: Db, slug = `ws-${uniq()}`): Promise<Workspace> {
  const id = await createWorkspace(sql, { slug, name: `Workspace ${slug}` });
  return { id, slug };
}

export interface Person {
  id: string;
  email: string;
  password: string;
  role: Role;
}

export async function makeUser(
  sql: Db,
  ws: Workspace,
  opts: { role?: Role; clientId?: string | null; name?: string; timezone?: string } = {},
): Promise<Person> {
  const role = opts.role ?? 'member';
  const email = `${role}-${uniq()}@example.test`;
  const password = `pw-${uniq()}-secret`;
  const id = await addPerson(sql, {
    workspaceId: ws.id,
    email,
    name: opts.name ?? `${role} ${uniq()}`,
    role,
    password: role === 'agent' ? null : password,
    clientId: opts.clientId ?? null,
    timezone: opts.timezone,
  });
  return { id, email, password, role };
}

export async function makeToken(
  sql: Db,
  ws: Workspace,
  person: { id: string },
  opts: { scopes?: Scope[]; projectIds?: string[] | null; expiresAt?: Date | null; kind?: 'delegated' | 'agent'; createdBy?: string } = {},
): Promise<{ id: string; token: string }> {
  const t = await issueToken(sql, {
    workspaceId: ws.id,
    createdBy: opts.createdBy ?? person.id,
    actsAs: person.id,
    kind: opts.kind ?? 'delegated',
    name: `test ${uniq()}`,
    scopes: opts.scopes ?? ['read', 'write', 'triage'],
    projectIds: opts.projectIds ?? null,
    expiresAt: opts.expiresAt ?? null,
  });
  return { id: t.id, token: t.token };
}

/** `delivery`: how its timesheets go out (issue 23); a new client reviews them unless a test says `automatic`. */
export async function makeClient(
  sql: Db,
  ws: Workspace,
  opts: { name?: string; code?: string; delivery?: 'review' | 'automatic' } = {},
): Promise<{ id: string; code: string }> {
  const code = opts.code ?? `C${uniq().toUpperCase()}`.slice(0, 8);
  const id = await createClient(sql, { workspaceId: ws.id, name: opts.name ?? `Client ${code}`, code });
  if (opts.delivery) await sql`update clients set delivery = ${opts.delivery} where id = ${id}`;
  return { id, code };
}

export async function makeProject(
  sql: Db,
  ws: Workspace,
  opts: {
    key?: string;
    billingClientId?: string | null;
    collaboratorIds?: string[];
    members?: { person: { id: string }; access?: 'full' | 'limited'; isManager?: boolean }[];
  } = {},
): Promise<{ id: string; key: string }> {
  const key =
    opts.key ??
    `P${uniq()
      .toUpperCase()
      .replace(/[^A-Z0-9]/g, 'X')}`.slice(0, 6);
  const id = await createProject(sql, {
    workspaceId: ws.id,
    key,
    name: `Project ${key}`,
    billingClientId: opts.billingClientId ?? null,
    collaboratorIds: opts.collaboratorIds,
  });
  for (const m of opts.members ?? []) {
    await addProjectMember(sql, { workspaceId: ws.id, projectId: id, identityId: m.person.id, access: m.access ?? 'full', isManager: m.isManager });
  }
  return { id, key };
}

/** Inserts a ticket directly (no rules), for tests that need tickets to exist. Defaults come from the workflow. */
export async function makeTicket(
  sql: Db,
  ws: Workspace,
  opts: {
    projectId?: string | null;
    title?: string;
    description?: string;
    reporterId?: string | null;
    assigneeId?: string | null;
    stateKey?: string;
    kindKey?: string;
    priorityKey?: string;
    billingClientId?: string | null;
    parentId?: string | null;
    estimateMinutes?: number | null;
    dueDate?: string | null;
    archived?: boolean;
    updatedAt?: Date;
  } = {},
): Promise<{ id: string; humanId: string; number: number }> {
  const { randomUUID } = await import('node:crypto');
  const { assignNumber } = await import('../../src/core/tickets/numbering.ts');
  const id = randomUUID();
  const projectId = opts.projectId ?? null;
  const [meta] = await sql<{ state: string; kind: string; priority: string; key: string | null; client: string | null }[]>`
    select (select id from workflow_states where workspace_id = ${ws.id} and ${opts.stateKey ? sql`key = ${opts.stateKey}` : sql`is_default`}) as state,
           (select id from ticket_kinds where workspace_id = ${ws.id} and ${opts.kindKey ? sql`key = ${opts.kindKey}` : sql`is_inbound`}) as kind,
           (select id from priorities where workspace_id = ${ws.id} and ${opts.priorityKey ? sql`key = ${opts.priorityKey}` : sql`is_default`}) as priority,
           (select key from projects where id = ${projectId}) as key,
           (select billing_client_id from projects where id = ${projectId}) as client`;
  const at = opts.updatedAt ?? new Date();
  const number = await sql.begin(async (t) => {
    const n = await assignNumber(t as unknown as Db, ws.id, projectId, id);
    await t`
      insert into tickets (id, workspace_id, project_id, number, title, description, kind_id, state_id, priority_id, assignee_id, reporter_id,
                           billing_client_id, parent_id, estimate_minutes, due_date, archived, created_at, updated_at)
      values (${id}, ${ws.id}, ${projectId}, ${n}, ${opts.title ?? `Ticket ${n}`}, ${opts.description ?? ''}, ${meta!.kind}, ${meta!.state}, ${meta!.priority},
              ${opts.assigneeId ?? null}, ${opts.reporterId ?? null}, ${opts.billingClientId === undefined ? meta!.client : opts.billingClientId},
              ${opts.parentId ?? null}, ${opts.estimateMinutes ?? null}, ${opts.dueDate ?? null}, ${opts.archived ?? false}, ${at}, ${at})`;
    return n;
  });
  return { id, humanId: `${meta!.key ?? 'INBOX'}-${number}`, number };
}

export interface WorkflowIds {
  states: Record<string, string>;
  kinds: Record<string, string>;
  priorities: Record<string, string>;
  /** By label name. */
  labels: Record<string, string>;
}

/** The workspace's workflow ids by key (labels by name), for tests that send ids in bodies. */
export async function workflowIds(sql: Db, ws: Workspace): Promise<WorkflowIds> {
  const rows = await sql<{ kind: keyof WorkflowIds; key: string; id: string }[]>`
    select 'states' as kind, key, id from workflow_states where workspace_id = ${ws.id}
    union all select 'kinds', key, id from ticket_kinds where workspace_id = ${ws.id}
    union all select 'priorities', key, id from priorities where workspace_id = ${ws.id}
    union all select 'labels', name, id from labels where workspace_id = ${ws.id}`;
  const out: WorkflowIds = { states: {}, kinds: {}, priorities: {}, labels: {} };
  for (const r of rows) out[r.kind][r.key] = r.id;
  return out;
}

/** Inserts a period directly (no contiguity rules); `closed` stamps it closed by `closedBy`. */
export async function makePeriod(
  sql: Db,
  ws: Workspace,
  opts: { start: string; end: string; closed?: boolean; closedBy?: string | null },
): Promise<{ id: string }> {
  const [row] = await sql<{ id: string }[]>`
    insert into periods (workspace_id, period_start, period_end, closed_at, closed_by)
    values (${ws.id}, ${opts.start}::date, ${opts.end}::date, ${opts.closed ? new Date() : null}, ${opts.closed ? (opts.closedBy ?? null) : null})
    returning id`;
  return row!;
}

export async function makeCategory(sql: Db, ws: Workspace, name = `Category ${uniq()}`): Promise<{ id: string; name: string }> {
  const [row] = await sql<{ id: string }[]>`insert into consultant_categories (workspace_id, name) values (${ws.id}, ${name}) returning id`;
  return { id: row!.id, name };
}

/**
 * Inserts a time entry directly (no rules), in the period holding `spentOn` (which must exist).
 * Project and billing client default to the ticket's.
 */
export async function makeTimeEntry(
  sql: Db,
  ws: Workspace,
  opts: {
    ticketId: string;
    userId: string;
    spentOn: string;
    minutes?: number;
    billable?: boolean;
    /** Billed by a (completed) billing run over the entry's period, made for it, holding it under the ticket's policy. */
    billed?: boolean;
    correctsEntryId?: string | null;
    billingClientId?: string | null;
    categoryId?: string | null;
    timezone?: string;
  },
): Promise<{ id: string }> {
  const [row] = await sql<{ id: string; periodId: string }[]>`
    insert into time_entries (workspace_id, ticket_id, user_id, project_id, billing_client_id, category_id, period_id, spent_on, timezone,
                              minutes, billable, corrects_entry_id)
    select ${ws.id}, t.id, ${opts.userId}, t.project_id,
           ${opts.billingClientId === undefined ? sql`t.billing_client_id` : sql`${opts.billingClientId}::uuid`}, ${opts.categoryId ?? null},
           (select p.id from periods p where p.workspace_id = ${ws.id} and ${opts.spentOn}::date between p.period_start and p.period_end),
           ${opts.spentOn}::date, ${opts.timezone ?? 'UTC'}, ${opts.minutes ?? 60}, ${opts.billable ?? true}, ${opts.correctsEntryId ?? null}
    from tickets t where t.id = ${opts.ticketId}
    returning id, period_id as "periodId"`;
  if (opts.billed) await billEntry(sql, ws, row!.id);
  return { id: row!.id };
}

/**
 * Bills one entry by a billing run of its own over the entry's period, as allocation would (the
 * run entry records the ticket's effective policy); an entry with no billing client is billed to
 * a client made for it, since a run only bills client work.
 */
export async function billEntry(sql: Db, ws: Workspace, entryId: string): Promise<void> {
  const [e] = await sql<{ periodId: string; clientId: string | null }[]>`
    select period_id as "periodId", billing_client_id as "clientId" from time_entries where id = ${entryId}`;
  const clientId = e!.clientId ?? (await makeClient(sql, ws)).id;
  const run = await makeBillingRun(sql, ws, { periodId: e!.periodId });
  const policy = effectiveBillingPolicySql(sql, 't');
  await sql`
    insert into billing_run_entries (run_id, entry_id, workspace_id, client_id, project_id, ticket_id, minutes, policy, bank_id)
    select ${run.id}, e.id, e.workspace_id, ${clientId}::uuid,
           e.project_id, e.ticket_id, e.minutes, split_part(lower(${policy}), ':', 1),
           case when lower(${policy}) like 'bank:%' then substr(${policy}, 6)::uuid end
    from time_entries e join tickets t on t.id = e.ticket_id where e.id = ${entryId}`;
  await sql`update time_entries set billed = true, billing_run_id = ${run.id} where id = ${entryId}`;
}

/** Inserts a comment directly (no rules, no event); the search triggers still run. */
export async function makeComment(
  sql: Db,
  ws: Workspace,
  opts: { ticketId: string; body: string; audience?: 'internal' | 'client'; authorId?: string | null; createdAt?: Date },
): Promise<{ id: string }> {
  const at = opts.createdAt ?? new Date();
  const [row] = await sql<{ id: string }[]>`
    insert into comments (workspace_id, ticket_id, author_id, audience, body, created_at, updated_at)
    values (${ws.id}, ${opts.ticketId}, ${opts.authorId ?? null}, ${opts.audience ?? 'internal'}, ${opts.body}, ${at}, ${at}) returning id`;
  return row!;
}

/** Adds viewers to a ticket directly. */
export async function addViewers(sql: Db, ticketId: string, identityIds: string[], addedBy: string | null = null): Promise<void> {
  for (const id of identityIds) {
    await sql`insert into ticket_viewers (ticket_id, identity_id, added_by) values (${ticketId}, ${id}, ${addedBy}) on conflict do nothing`;
  }
}

/** Puts labels (by name) on a ticket directly. */
export async function addLabels(sql: Db, ws: Workspace, ticketId: string, names: string[]): Promise<void> {
  await sql`
    insert into ticket_labels (ticket_id, label_id)
    select ${ticketId}, l.id from labels l where l.workspace_id = ${ws.id} and l.name = any(${names}::text[]) on conflict do nothing`;
}

/** Inserts a ticket link directly (no cycle or depth rules). */
export async function makeLink(
  sql: Db,
  ws: Workspace,
  opts: { sourceId: string; targetId: string; kind: 'blocks' | 'relates' | 'duplicates' },
): Promise<{ id: string }> {
  const [row] = await sql<{ id: string }[]>`
    insert into ticket_links (workspace_id, source_id, target_id, kind) values (${ws.id}, ${opts.sourceId}, ${opts.targetId}, ${opts.kind}) returning id`;
  return row!;
}

/** Lists a person as a billing recipient of a client (what makes a client user a billing contact). */
export async function makeBillingRecipient(sql: Db, clientId: string, person: { id: string; email: string }): Promise<void> {
  await sql`insert into client_billing_recipients (client_id, identity_id, email) values (${clientId}, ${person.id}, ${person.email})`;
}

/** A time bank of a client with deposits (minutes). */
export async function makeBank(sql: Db, ws: Workspace, opts: { clientId: string; name?: string; deposits?: number[]; id?: string }): Promise<{ id: string }> {
  const [bank] = await sql<{ id: string }[]>`
    insert into banks (id, workspace_id, client_id, name)
    values (${opts.id ?? sql`gen_random_uuid()`}, ${ws.id}, ${opts.clientId}, ${opts.name ?? `Bank ${uniq()}`}) returning id`;
  for (const minutes of opts.deposits ?? []) {
    await sql`insert into bank_deposits (bank_id, minutes, deposited_on) values (${bank!.id}, ${minutes}, current_date)`;
  }
  return bank!;
}

/** A billing run over a period (minimal row; the billing area fills it in later). */
export async function makeBillingRun(sql: Db, ws: Workspace, opts: { periodId: string; status?: string }): Promise<{ id: string }> {
  const [row] = await sql<{ id: string }[]>`
    insert into billing_runs (workspace_id, period_id, status, voided_at)
    values (${ws.id}, ${opts.periodId}, ${opts.status ?? 'completed'}, ${opts.status === 'voided' ? sql`now()` : null}) returning id`;
  return row!;
}

/** Inserts a timesheet document directly (no rendering): combined when projectId is absent. */
export async function makeDocument(
  sql: Db,
  ws: Workspace,
  opts: {
    runId: string;
    clientId: string;
    projectId?: string | null;
    number?: string;
    format?: 'html' | 'pdf' | 'csv';
    periodStart?: string;
    voided?: boolean;
    redacted?: boolean;
    version?: number;
    deliveries?: { email: string | null; state?: string }[];
  },
): Promise<{ id: string; number: string }> {
  const number = opts.number ?? `DOC-${uniq().toUpperCase()}`;
  const content = Buffer.from(`<p>${number}</p>`);
  const version = opts.version ?? 1;
  const format = opts.format ?? 'html';
  const [sheet] = await sql<{ id: string }[]>`
    insert into timesheets (workspace_id, run_id, client_id, project_id, scope, number, version, formats)
    values (${ws.id}, ${opts.runId}, ${opts.clientId}, ${opts.projectId ?? null}, ${opts.projectId ? 'project' : 'combined'}, ${number}, ${version}, ${[format]}::text[])
    on conflict (workspace_id, number, version) do update set formats = array(select distinct unnest(timesheets.formats || excluded.formats))
    returning id`;
  const [row] = await sql<{ id: string }[]>`
    insert into documents (workspace_id, run_id, client_id, project_id, scope, number, period_start, format, version, locale, checksum, bytes, content, voided, redacted, timesheet_id)
    values (${ws.id}, ${opts.runId}, ${opts.clientId}, ${opts.projectId ?? null}, ${opts.projectId ? 'project' : 'combined'}, ${number},
            ${opts.periodStart ?? '2025-01-01'}::date, ${format}, ${version}, 'en-GB', ${'sha-' + number}, ${content.length}, ${content},
            ${opts.voided ?? false}, ${opts.redacted ?? false}, ${sheet!.id})
    returning id`;
  for (const d of opts.deliveries ?? []) {
    await sql`insert into document_deliveries (workspace_id, timesheet_id, email, state) values (${ws.id}, ${sheet!.id}, ${d.email}, ${d.state ?? 'pending'})`;
  }
  return { id: row!.id, number };
}

/** Grants a workspace user every document of a client. */
export async function makeDocumentGrant(sql: Db, ws: Workspace, clientId: string, person: { id: string }): Promise<void> {
  await sql`insert into document_grants (workspace_id, client_id, identity_id) values (${ws.id}, ${clientId}, ${person.id})`;
}

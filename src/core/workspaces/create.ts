import { inTransaction, type Db } from '../../db/connect.ts';
import { invalid } from '../errors.ts';
import { singleAddress } from '../mail/address.ts';

/** The workflow a new workspace starts with: Linear's shape, which agencies know. */
export const defaultWorkflow = {
  states: [
    { key: 'triage', name: 'Triage', category: 'open', isDefault: false, isCustomerResolve: false },
    { key: 'todo', name: 'Todo', category: 'open', isDefault: true, isCustomerResolve: false },
    { key: 'in_progress', name: 'In progress', category: 'open', isDefault: false, isCustomerResolve: false },
    { key: 'in_review', name: 'In review', category: 'open', isDefault: false, isCustomerResolve: false },
    { key: 'done', name: 'Done', category: 'closed', isDefault: false, isCustomerResolve: true },
    { key: 'cancelled', name: 'Cancelled', category: 'closed', isDefault: false, isCustomerResolve: false },
  ],
  kinds: [
    { key: 'request', name: 'Request', isInbound: true },
    { key: 'bug', name: 'Bug', isInbound: false },
    { key: 'feature', name: 'Feature', isInbound: false },
    { key: 'task', name: 'Task', isInbound: false },
  ],
  priorities: [
    { key: 'urgent', name: 'Urgent', isDefault: false },
    { key: 'high', name: 'High', isDefault: false },
    { key: 'normal', name: 'Normal', isDefault: true },
    { key: 'low', name: 'Low', isDefault: false },
  ],
  labels: ['frontend', 'backend', 'design', 'infrastructure', 'billing', 'customer'],
} as const;

/** Creates a workspace with the default workflow; returns its id. */
export async function createWorkspace(sql: Db, input: { slug: string; name: string }): Promise<string> {
  return inTransaction(sql, async (t) => {
    const [ws] = await t<{ id: string }[]>`insert into workspaces (slug, name) values (${input.slug}, ${input.name}) returning id`;
    const id = ws!.id;
    const wf = defaultWorkflow;
    await t`insert into workflow_states ${t(wf.states.map((s, i) => ({ workspace_id: id, key: s.key, name: s.name, category: s.category, position: i, is_default: s.isDefault, is_customer_resolve: s.isCustomerResolve })))}`;
    await t`insert into ticket_kinds ${t(wf.kinds.map((k, i) => ({ workspace_id: id, key: k.key, name: k.name, position: i, is_inbound: k.isInbound })))}`;
    await t`insert into priorities ${t(wf.priorities.map((p, i) => ({ workspace_id: id, key: p.key, name: p.name, position: i, is_default: p.isDefault })))}`;
    await t`insert into labels ${t(wf.labels.map((name) => ({ workspace_id: id, name })))}`;
    return id;
  });
}

export async function createClient(
  sql: Db,
  c: {
    workspaceId: string;
    name: string;
    code: string;
    locale?: string;
    timesheetLayout?: 'combined' | 'project';
    recipients?: { email: string | null; name?: string }[];
  },
): Promise<string> {
  for (const r of c.recipients ?? []) {
    if (r.email !== null && !singleAddress(r.email)) {
      throw invalid(
        'recipient_address',
        { field: 'recipients', email: r.email },
        'A billing recipient is one bare email address (no list, name or line break).',
      );
    }
  }
  const [row] = await sql<{ id: string }[]>`
    insert into clients (workspace_id, name, code, locale, timesheet_layout)
    values (${c.workspaceId}, ${c.name}, ${c.code}, ${c.locale ?? 'en-GB'}, ${c.timesheetLayout ?? 'combined'}) returning id`;
  for (const r of c.recipients ?? []) {
    await sql`insert into client_billing_recipients (client_id, email, name) values (${row!.id}, ${r.email}, ${r.name ?? null})`;
  }
  return row!.id;
}

export async function createProject(
  sql: Db,
  p: {
    workspaceId: string;
    key: string;
    name: string;
    billingClientId?: string | null;
    collaboratorIds?: string[];
    billingPolicy?: string | null;
    billingMode?: 'period' | 'on_close' | null;
  },
): Promise<string> {
  const [row] = await sql<{ id: string }[]>`
    insert into projects (workspace_id, key, name, billing_client_id, billing_policy, billing_mode)
    values (${p.workspaceId}, ${p.key}, ${p.name}, ${p.billingClientId ?? null}, ${p.billingPolicy ?? null}, ${p.billingMode ?? null}) returning id`;
  await sql`insert into project_prefixes (workspace_id, prefix, project_id) values (${p.workspaceId}, ${p.key}, ${row!.id})`;
  for (const clientId of p.collaboratorIds ?? []) {
    await sql`insert into project_collaborators (project_id, client_id) values (${row!.id}, ${clientId})`;
  }
  return row!.id;
}

export async function addProjectMember(
  sql: Db,
  m: { workspaceId: string; projectId: string; identityId: string; access: 'full' | 'limited'; isManager?: boolean; categoryId?: string | null },
): Promise<void> {
  await sql`
    insert into project_memberships (workspace_id, project_id, identity_id, access, is_manager, category_id)
    values (${m.workspaceId}, ${m.projectId}, ${m.identityId}, ${m.access}, ${m.isManager ?? false}, ${m.categoryId ?? null})
    on conflict (project_id, identity_id) do update set access = excluded.access, is_manager = excluded.is_manager, category_id = excluded.category_id`;
}

import { listClients } from '../../core/clients/list.ts';
import { listPeople } from '../../core/people/list.ts';
import { archiveProject } from '../../core/projects/archive.ts';
import { createProject } from '../../core/projects/create.ts';
import { getProject } from '../../core/projects/get.ts';
import { listProjects } from '../../core/projects/list.ts';
import { listProjectMembers, removeProjectMember, setProjectMember } from '../../core/projects/members.ts';
import { updateProject } from '../../core/projects/update.ts';
import { listCategories } from '../../core/time/categories.ts';
import type { OperationInput } from '../../core/operation.ts';
import { runOp } from '../../core/operation.ts';
import { defineAction, withMessage, type OpsRequest, type OpsRoute } from '../route.ts';
import { html, type Html } from '../html.ts';
import { formHead, given, idOrNull, options, rowButton, setupPage, stackedTable, ticked } from './setup-common.ts';

const MODES = [
  ['', 'the client’s'],
  ['period', 'Per period'],
  ['on_close', 'When a ticket closes'],
] as const;
const ACCESS = [
  ['full', 'Full'],
  ['limited', 'Limited'],
] as const;

type Choice = readonly [string, string];

interface ProjectFields {
  key?: string;
  name?: string;
  billingClientId?: string | null;
  billingPolicy?: string | null;
  billingMode?: string | null;
  collaboratorIds?: string[];
}

/** The project's fields, as the create and edit forms show them; collaborating clients are checkboxes `collab_<clientId>`. */
function projectFields(prefix: string, p: ProjectFields, clients: Choice[]): Html {
  const collab = new Set(p.collaboratorIds ?? []);
  return html`<label for="${prefix}-key"
      >Key (2-10 letters or digits, the prefix of ticket ids) <input id="${prefix}-key" name="key" required value="${p.key ?? ''}"
    /></label>
    <label for="${prefix}-name">Name <input id="${prefix}-name" name="name" required value="${p.name ?? ''}" /></label>
    <label for="${prefix}-client"
      >Billing client
      <select id="${prefix}-client" name="billingClientId">
        ${options([['', 'none (internal work)'], ...clients], p.billingClientId)}
      </select></label
    >
    <label for="${prefix}-policy"
      >Billing policy (blank: the client’s; paid, free or bank:&lt;id&gt;) <input id="${prefix}-policy" name="billingPolicy" value="${p.billingPolicy ?? ''}"
    /></label>
    <label for="${prefix}-mode"
      >Billing mode
      <select id="${prefix}-mode" name="billingMode">
        ${options(MODES, p.billingMode)}
      </select></label
    >
    ${
      clients.length
        ? html`<fieldset>
            <legend>Collaborating clients</legend>
            ${clients.map(
              ([id, label]) => html`<label class="check"><input type="checkbox" name="collab_${id}" ${collab.has(id) ? html`checked` : ''} /> ${label}</label>`,
            )}
          </fieldset>`
        : ''
    }`;
}

type CreateInput = OperationInput<typeof createProject>;

const fieldsSent = (b: Record<string, string>) => ({
  billingClientId: idOrNull(b.billingClientId),
  billingPolicy: given(b.billingPolicy) ?? null,
  billingMode: (given(b.billingMode) ?? null) as CreateInput['billingMode'],
  collaboratorIds: Object.keys(b)
    .filter((k) => k.startsWith('collab_') && ticked(b[k]))
    .map((k) => k.slice('collab_'.length)),
});

const clientChoices = async (r: OpsRequest): Promise<Choice[]> =>
  (await runOp(listClients, r.ctx, { archived: 'false' })).clients.map((c) => [c.id, `${c.name} (${c.code})`] as const);

async function projectsPage(r: OpsRequest) {
  const [{ projects }, clients] = await Promise.all([runOp(listProjects, r.ctx, { archived: 'all' }), clientChoices(r)]);
  const rows = projects.map((p) => [
    html`<a href="/ops/setup/projects/${p.id}">${p.key}</a>`,
    html`${p.name}`,
    html`${p.billingClient ? p.billingClient.name : html`<span class="muted">internal</span>`}`,
    html`${p.archivedAt ? 'archived' : 'active'}`,
  ]);
  return setupPage(
    r,
    'projects',
    'Projects',
    html`<h2>New project</h2>
      <form method="post" action="/ops/setup/projects" class="stack">
        ${formHead(r, '/ops/setup/projects')} ${projectFields('new', {}, clients)}
        <button type="submit">Create project</button>
      </form>
      <h2>Projects</h2>
      ${stackedTable('Projects by key', ['Key', 'Name', 'Billing client', 'State'], rows, 'No project yet.')}`,
  );
}

async function projectPage(r: OpsRequest) {
  const id = r.params.id ?? '';
  const [project, { members }, clients, { people }, { categories }] = await Promise.all([
    runOp(getProject, r.ctx, { id }),
    runOp(listProjectMembers, r.ctx, { id }),
    clientChoices(r),
    runOp(listPeople, r.ctx, { limit: 200 }),
    runOp(listCategories, r.ctx, {}),
  ]);
  const back = `/ops/setup/projects/${project.id}`;
  const categoryChoices: Choice[] = [['', 'their default'], ...categories.map((c) => [c.id, c.name] as const)];
  const inProject = new Set(members.map((m) => m.identityId));
  // project members are workspace users (client users see projects through their client)
  const candidates = people.filter((p) => !p.client && !p.deactivated && !inProject.has(p.id));

  const memberRows = members.map((m) => [
    html`${m.name}`,
    html`${m.role}`,
    html`<form method="post" action="${back}/members" class="row-form">
      ${formHead(r, back)}<input type="hidden" name="identityId" value="${m.identityId}" />
      <select name="access" aria-label="Access of ${m.name}">
        ${options(ACCESS, m.access)}
      </select>
      <select name="categoryId" aria-label="Category of ${m.name} here">
        ${options(categoryChoices, m.categoryId)}
      </select>
      <label class="check"><input type="checkbox" name="manager" ${m.manager ? html`checked` : ''} /> Manager</label>
      <button type="submit">Save ${m.name}</button>
    </form>`,
    rowButton(r, `${back}/members/remove`, back, `Remove ${m.name}`, { identityId: m.identityId }, 'danger'),
  ]);

  const addForm = candidates.length
    ? html`<form method="post" action="${back}/members" class="stack">
        ${formHead(r, back)}
        <label for="add-person"
          >Person
          <select id="add-person" name="identityId">
            ${options(
              candidates.map((p) => [p.id, `${p.name}${p.email ? ` <${p.email}>` : ''}`] as const),
              null,
            )}
          </select></label
        >
        <label for="add-access"
          >Access
          <select id="add-access" name="access">
            ${options(ACCESS, 'full')}
          </select></label
        >
        <label for="add-category"
          >Category here
          <select id="add-category" name="categoryId">
            ${options(categoryChoices, '')}
          </select></label
        >
        <label class="check"><input type="checkbox" name="manager" /> Project manager</label>
        <button type="submit">Add member</button>
      </form>`
    : html`<p class="empty">Every active workspace user is a member already.</p>`;

  return setupPage(
    r,
    'projects',
    `Project: ${project.key} · ${project.name}`,
    html`<p><a href="/ops/setup/projects">All projects</a></p>
      ${project.formerKeys.length ? html`<p>Former keys (their ticket ids still work): ${project.formerKeys.join(', ')}</p>` : ''}
      <h2>Members</h2>
      ${stackedTable('Project members by name', ['Name', 'Role', 'Membership', 'Remove'], memberRows, 'No member yet.')}
      <h3>Add a member</h3>
      ${addForm}
      <h2>Settings</h2>
      <form method="post" action="${back}" class="stack">
        ${formHead(r, back)} ${projectFields('edit', project, clients)}
        <button type="submit">Save project</button>
      </form>
      <h2>${project.archivedAt ? 'Restore' : 'Archive'}</h2>
      <p>An archived project keeps its tickets and time, and its key still resolves.</p>
      ${rowButton(r, `${back}/archive`, back, project.archivedAt ? 'Restore project' : 'Archive project', { archived: String(!project.archivedAt) })}`,
  );
}

export const setupProjectPages: OpsRoute[] = [
  { method: 'GET', path: '/setup/projects', page: projectsPage },
  { method: 'GET', path: '/setup/projects/:id', page: projectPage },
  defineAction({
    method: 'POST',
    path: '/setup/projects',
    op: createProject,
    sent: (r) => ({ key: r.body.key ?? '', name: r.body.name ?? '', ...fieldsSent(r.body) }),
    answer: (p) => ({ redirect: withMessage(`/ops/setup/projects/${p.id}`, 'msg', `Project ${p.key} is created: add its members.`) }),
  }),
  defineAction({
    method: 'POST',
    path: '/setup/projects/:id',
    op: updateProject,
    sent: (r) => ({ id: r.params.id ?? '', key: given(r.body.key), name: given(r.body.name), ...fieldsSent(r.body) }),
    answer: (p) => ({ redirect: withMessage(`/ops/setup/projects/${p.id}`, 'msg', `Project ${p.key} is saved.`) }),
  }),
  defineAction({
    method: 'POST',
    path: '/setup/projects/:id/members',
    op: setProjectMember,
    sent: (r) => ({
      id: r.params.id ?? '',
      identityId: r.body.identityId ?? '',
      access: r.body.access as OperationInput<typeof setProjectMember>['access'],
      manager: ticked(r.body.manager),
      categoryId: idOrNull(r.body.categoryId),
    }),
    answer: (m, r) => ({
      redirect: withMessage(`/ops/setup/projects/${r.params.id}`, 'msg', `${m.name} is a member (${m.access}${m.manager ? ', manager' : ''}).`),
    }),
  }),
  defineAction({
    method: 'POST',
    path: '/setup/projects/:id/members/remove',
    op: removeProjectMember,
    sent: (r) => ({ id: r.params.id ?? '', identityId: r.body.identityId ?? '' }),
    answer: (_ok, r) => ({ redirect: withMessage(`/ops/setup/projects/${r.params.id}`, 'msg', 'The member is removed; their time and tickets stay.') }),
  }),
  defineAction({
    method: 'POST',
    path: '/setup/projects/:id/archive',
    op: archiveProject,
    sent: (r) => ({ id: r.params.id ?? '', archived: r.body.archived !== 'false' }),
    answer: (p) => ({ redirect: withMessage(`/ops/setup/projects/${p.id}`, 'msg', p.archivedAt ? `${p.key} is archived.` : `${p.key} is restored.`) }),
  }),
];

import { getWorkflow } from '../../core/workflow/get.ts';
import { createKind, deleteKind, updateKind } from '../../core/workflow/kinds.ts';
import { createLabel, deleteLabel, updateLabel } from '../../core/workflow/labels.ts';
import { createPriority, deletePriority, updatePriority } from '../../core/workflow/priorities.ts';
import { createState, deleteState, updateState } from '../../core/workflow/states.ts';
import type { OperationInput } from '../../core/operation.ts';
import { runOp } from '../../core/operation.ts';
import { defineAction, withMessage, type OpsRequest, type OpsRoute } from '../route.ts';
import { html, type Html } from '../html.ts';
import { formHead, given, options, setupPage, stackedTable, ticked } from './setup-common.ts';

const BACK = '/ops/setup/workflow';

/** A vocabulary's item as the page lists it. */
interface Item {
  id: string;
  name: string;
  key?: string;
  position?: number;
}

/** A flag of an ordered vocabulary (the default state, the inbound kind): exactly one item holds it, moved by ticking it on another. */
interface Flag {
  field: string;
  label: string;
}

/** Rename (and reorder, re-flag) one item: flags it does not hold are offered as "make it …" boxes (one always holds each). */
function editForm(r: OpsRequest, list: string, item: Item, flags: Flag[], held: (f: Flag) => boolean, extra: Html = html``): Html {
  return html`<form method="post" action="/ops/setup/workflow/${list}/update" class="row-form">
    ${formHead(r, BACK)}<input type="hidden" name="id" value="${item.id}" />
    <input name="name" aria-label="Name of ${item.name}" value="${item.name}" required />
    ${
      item.position !== undefined
        ? html`<input name="position" type="number" min="0" max="1000" aria-label="Position of ${item.name}" value="${String(item.position)}" class="narrow" />`
        : ''
    }
    ${extra} ${flags.filter((f) => !held(f)).map((f) => html`<label class="check"><input type="checkbox" name="${f.field}" /> ${f.label}</label>`)}
    <button type="submit">Save ${item.name}</button>
  </form>`;
}

/** Delete one item, its tickets moving to another (required while any ticket uses it). */
function deleteForm(r: OpsRequest, list: string, item: Item, others: Item[]): Html {
  return html`<form method="post" action="/ops/setup/workflow/${list}/delete" class="row-form">
    ${formHead(r, BACK)}<input type="hidden" name="id" value="${item.id}" />
    <select name="moveTo" aria-label="Move the tickets of ${item.name} to">
      ${options([['', 'no ticket uses it'], ...others.map((o) => [o.id, `move tickets to ${o.name}`] as const)], '')}
    </select>
    <button type="submit" class="danger">Delete ${item.name}</button>
  </form>`;
}

function createForm(r: OpsRequest, list: string, what: string, fields: Html): Html {
  return html`<form method="post" action="/ops/setup/workflow/${list}" class="filters">
    ${formHead(r, BACK)} ${fields}
    <button type="submit">Add ${what}</button>
  </form>`;
}

const keyAndName = (list: string) =>
  html`<label for="${list}-key">Key (a-z, 0-9, _) <input id="${list}-key" name="key" required pattern="[a-z][a-z0-9_]{0,39}" /></label>
    <label for="${list}-name">Name <input id="${list}-name" name="name" required /></label>`;

const STATE_FLAGS: Flag[] = [
  { field: 'isDefault', label: 'Make it the default' },
  { field: 'isCustomerResolve', label: 'Make it the customer-resolve state' },
];
const KIND_FLAGS: Flag[] = [{ field: 'isInbound', label: 'Make it the inbound kind' }];
const PRIORITY_FLAGS: Flag[] = [{ field: 'isDefault', label: 'Make it the default' }];
const CATEGORIES = [
  ['open', 'open'],
  ['closed', 'closed (done)'],
] as const;

async function workflowPage(r: OpsRequest) {
  const wf = await runOp(getWorkflow, r.ctx, {});
  const others = (items: Item[], id: string) => items.filter((i) => i.id !== id);

  const stateRows = wf.states.map((s) => [
    html`${s.name} <span class="muted">(${s.key})</span>`,
    html`${s.category}`,
    html`${[s.isDefault ? 'default' : '', s.isCustomerResolve ? 'customer resolve' : ''].filter(Boolean).join(', ') || '–'}`,
    editForm(r, 'states', s, STATE_FLAGS, (f) => (f.field === 'isDefault' ? s.isDefault : s.isCustomerResolve)),
    deleteForm(r, 'states', s, others(wf.states, s.id)),
  ]);
  const kindRows = wf.kinds.map((k) => [
    html`${k.name} <span class="muted">(${k.key})</span>`,
    html`${k.isInbound ? 'inbound' : '–'}`,
    editForm(r, 'kinds', k, KIND_FLAGS, () => k.isInbound),
    deleteForm(r, 'kinds', k, others(wf.kinds, k.id)),
  ]);
  const priorityRows = wf.priorities.map((p) => [
    html`${p.name} <span class="muted">(${p.key})</span>`,
    html`${p.isDefault ? 'default' : '–'}`,
    editForm(r, 'priorities', p, PRIORITY_FLAGS, () => p.isDefault),
    deleteForm(r, 'priorities', p, others(wf.priorities, p.id)),
  ]);
  const labelRows = wf.labels.map((l) => [
    html`${l.name}`,
    html`${l.color ?? '–'}`,
    editForm(
      r,
      'labels',
      l,
      [],
      () => true,
      html`<input name="color" aria-label="Colour of ${l.name} (#rrggbb)" value="${l.color ?? ''}" pattern="#[0-9a-fA-F]{6}" class="narrow" />`,
    ),
    deleteForm(r, 'labels', l, others(wf.labels, l.id)),
  ]);

  return setupPage(
    r,
    'workflow',
    'Workflow',
    html`<p>States, kinds, priorities and labels of tickets. Deleting one that tickets use moves them to the one you pick, each with an event.</p>
      <h2>States</h2>
      ${stackedTable('Workflow states, in board order', ['State', 'Category', 'Role', 'Edit', 'Delete'], stateRows, 'No state.')}
      ${createForm(
        r,
        'states',
        'state',
        html`${keyAndName('states')}
          <label for="states-category"
            >Category
            <select id="states-category" name="category">
              ${options(CATEGORIES, 'open')}
            </select></label
          >`,
      )}
      <h2>Kinds</h2>
      ${stackedTable('Ticket kinds', ['Kind', 'Role', 'Edit', 'Delete'], kindRows, 'No kind.')} ${createForm(r, 'kinds', 'kind', keyAndName('kinds'))}
      <h2>Priorities</h2>
      ${stackedTable('Priorities, most urgent first', ['Priority', 'Role', 'Edit', 'Delete'], priorityRows, 'No priority.')}
      ${createForm(r, 'priorities', 'priority', keyAndName('priorities'))}
      <h2>Labels</h2>
      ${stackedTable('Labels by name', ['Label', 'Colour', 'Edit', 'Delete'], labelRows, 'No label yet.')}
      ${createForm(
        r,
        'labels',
        'label',
        html`<label for="labels-name">Name <input id="labels-name" name="name" required /></label>
          <label for="labels-color">Colour (#rrggbb, optional) <input id="labels-color" name="color" pattern="#[0-9a-fA-F]{6}" /></label>`,
      )}`,
  );
}

/** A position field: blank leaves it where it is. */
const position = (v: string | undefined) => (given(v) === undefined ? undefined : Number(v));
/** A "make it …" box: ticked sends true; unticked sends nothing (false on the holder would be refused). */
const flag = (v: string | undefined) => (ticked(v) ? true : undefined);
const moved = (n: number) => (n ? ` ${n} ticket(s) moved, each with an event.` : '');
const done = (message: string) => ({ redirect: withMessage(BACK, 'msg', message) });

export const setupWorkflowPages: OpsRoute[] = [
  { method: 'GET', path: '/setup/workflow', page: workflowPage },
  defineAction({
    method: 'POST',
    path: '/setup/workflow/states',
    op: createState,
    sent: (r) => ({ key: r.body.key ?? '', name: r.body.name ?? '', category: r.body.category as OperationInput<typeof createState>['category'] }),
    answer: (s) => done(`State ${s.name} is added.`),
  }),
  defineAction({
    method: 'POST',
    path: '/setup/workflow/states/update',
    op: updateState,
    sent: (r) => ({
      id: r.body.id ?? '',
      name: given(r.body.name),
      position: position(r.body.position),
      isDefault: flag(r.body.isDefault),
      isCustomerResolve: flag(r.body.isCustomerResolve),
    }),
    answer: (s) => done(`State ${s.name} is saved.`),
  }),
  defineAction({
    method: 'POST',
    path: '/setup/workflow/states/delete',
    op: deleteState,
    sent: (r) => ({ id: r.body.id ?? '', moveTo: given(r.body.moveTo) }),
    answer: (d) => done(`The state is deleted.${moved(d.moved)}`),
  }),
  defineAction({
    method: 'POST',
    path: '/setup/workflow/kinds',
    op: createKind,
    sent: (r) => ({ key: r.body.key ?? '', name: r.body.name ?? '' }),
    answer: (k) => done(`Kind ${k.name} is added.`),
  }),
  defineAction({
    method: 'POST',
    path: '/setup/workflow/kinds/update',
    op: updateKind,
    sent: (r) => ({ id: r.body.id ?? '', name: given(r.body.name), position: position(r.body.position), isInbound: flag(r.body.isInbound) }),
    answer: (k) => done(`Kind ${k.name} is saved.`),
  }),
  defineAction({
    method: 'POST',
    path: '/setup/workflow/kinds/delete',
    op: deleteKind,
    sent: (r) => ({ id: r.body.id ?? '', moveTo: given(r.body.moveTo) }),
    answer: (d) => done(`The kind is deleted.${moved(d.moved)}`),
  }),
  defineAction({
    method: 'POST',
    path: '/setup/workflow/priorities',
    op: createPriority,
    sent: (r) => ({ key: r.body.key ?? '', name: r.body.name ?? '' }),
    answer: (p) => done(`Priority ${p.name} is added.`),
  }),
  defineAction({
    method: 'POST',
    path: '/setup/workflow/priorities/update',
    op: updatePriority,
    sent: (r) => ({ id: r.body.id ?? '', name: given(r.body.name), position: position(r.body.position), isDefault: flag(r.body.isDefault) }),
    answer: (p) => done(`Priority ${p.name} is saved.`),
  }),
  defineAction({
    method: 'POST',
    path: '/setup/workflow/priorities/delete',
    op: deletePriority,
    sent: (r) => ({ id: r.body.id ?? '', moveTo: given(r.body.moveTo) }),
    answer: (d) => done(`The priority is deleted.${moved(d.moved)}`),
  }),
  defineAction({
    method: 'POST',
    path: '/setup/workflow/labels',
    op: createLabel,
    sent: (r) => ({ name: r.body.name ?? '', color: given(r.body.color) ?? null }),
    answer: (l) => done(`Label ${l.name} is added.`),
  }),
  defineAction({
    method: 'POST',
    path: '/setup/workflow/labels/update',
    op: updateLabel,
    sent: (r) => ({ id: r.body.id ?? '', name: given(r.body.name), color: given(r.body.color) ?? null }),
    answer: (l) => done(`Label ${l.name} is saved.`),
  }),
  defineAction({
    method: 'POST',
    path: '/setup/workflow/labels/delete',
    op: deleteLabel,
    sent: (r) => ({ id: r.body.id ?? '', moveTo: given(r.body.moveTo) }),
    answer: (d) => done(`The label is deleted.${moved(d.moved)}`),
  }),
];

import { z } from 'zod';
import type { Ctx } from '../ctx.ts';
import { conflict } from '../errors.ts';
import { defineOp } from '../operation.ts';
import { withReasons } from '../validation.ts';
import {
  categoryField,
  itemId,
  keyField,
  moveToField,
  nameField,
  positionField,
  workflowItemDeletedSchema,
  workflowStateSchema,
  type WorkflowItemDeleted,
  type WorkflowState,
} from './admin-schema.ts';
import { changeWorkflow, createItem, deleteOrdered, findItem, inUse, updateItem, type OrderedList } from './vocabulary.ts';

/**
 * Workflow states (issue 22), Owner/Admin: create, rename, re-key, reorder, re-flag, delete with a
 * target. Exactly one state is the default (new tickets start there; it is open) and one the
 * customer-resolve state (where client users resolve a ticket).
 */
const STATES: OrderedList = {
  name: 'states',
  table: 'workflow_states',
  what: 'workflow state',
  unknown: 'unknown_state',
  ticketColumn: 'state_id',
  field: 'stateId',
  columns: (sql) => sql`id, key, name, category, position, is_default as "isDefault", is_customer_resolve as "isCustomerResolve"`,
  flags: [
    {
      column: 'is_default',
      field: 'isDefault',
      reason: 'default_required',
      message: 'One state is always the default: make another state the default instead.',
    },
    {
      column: 'is_customer_resolve',
      field: 'isCustomerResolve',
      reason: 'resolve_required',
      message: 'One state is always the customer-resolve state: make another state it instead.',
    },
  ],
};

const defaultClosed = () => conflict('default_closed', { field: 'isDefault' }, 'The default state is where new tickets start: it must be open.');

export const createStateFields = z.object({
  key: keyField,
  name: nameField,
  category: categoryField,
  position: positionField.optional(),
  isDefault: z.boolean().optional().describe('Make it the default state (the current one stops being it); only an open state can be'),
  isCustomerResolve: z.boolean().optional().describe('Make it the customer-resolve state (the current one stops being it)'),
});

export const updateStateFields = z.object({
  key: keyField.optional(),
  name: nameField.optional(),
  category: categoryField.optional().describe('Only while no ticket is in the state (409 `in_use`): move them with DELETE instead'),
  position: positionField.optional(),
  isDefault: z.boolean().optional().describe('true: make it the default state; false on the default is 409 `default_required`'),
  isCustomerResolve: z.boolean().optional().describe('true: make it the customer-resolve state; false on it is 409 `resolve_required`'),
});

const updateStateInput = withReasons(updateStateFields.extend({ id: itemId('workflow state') }), { id: 'bad_uuid' });
const deleteStateInput = withReasons(z.object({ id: itemId('workflow state'), moveTo: moveToField }), { id: 'bad_uuid', moveTo: 'bad_uuid' });

const idOf = (s: { id?: unknown }) => (typeof s.id === 'string' ? s.id : null);

/** POST /workflow/states: a new state, last unless it names a position. */
export const createState = defineOp({
  name: 'workflow.states.create',
  action: 'workflow.states.create',
  input: createStateFields,
  output: workflowStateSchema,
  audit: { action: 'workflow.states.create', target: (s) => (typeof s.key === 'string' ? s.key : null) },
  run: (ctx, input): Promise<WorkflowState> =>
    changeWorkflow(ctx, 'states', async (ctx) => {
      if (input.isDefault && input.category === 'closed') throw defaultClosed();
      const { isDefault, isCustomerResolve, category, ...fields } = input;
      return createItem<WorkflowState>(ctx, STATES, { ...fields, columns: { category }, flags: { isDefault, isCustomerResolve } });
    }),
});

/**
 * PUT /workflow/states/{id}: changes what is sent. A state's category changes only while no ticket
 * is in it (the tickets' closedAt and billing on close follow the category they were moved into).
 */
export const updateState = defineOp({
  name: 'workflow.states.update',
  action: 'workflow.states.update',
  input: updateStateInput,
  output: workflowStateSchema,
  audit: { action: 'workflow.states.update', target: idOf },
  run: (ctx, { id, isDefault, isCustomerResolve, category, ...fields }): Promise<WorkflowState> =>
    changeWorkflow(ctx, 'states', async (ctx) => {
      const before = await findItem<WorkflowState>(ctx, STATES, id);
      if (category !== undefined && category !== before.category) await assertEmpty(ctx, id);
      if ((category ?? before.category) === 'closed' && (isDefault ?? before.isDefault)) throw defaultClosed();
      return updateItem(ctx, STATES, before, { ...fields, columns: { category }, flags: { isDefault, isCustomerResolve } });
    }),
});

async function assertEmpty(ctx: Ctx, stateId: string): Promise<void> {
  const [row] = await ctx.sql<
    { n: number }[]
  >`select count(*)::int as n from tickets where workspace_id = ${ctx.principal.workspaceId} and state_id = ${stateId}`;
  if (row!.n > 0) throw inUse('workflow state', row!.n);
}

/**
 * DELETE /workflow/states/{id}?moveTo=: the default and the customer-resolve state cannot go (409);
 * tickets in it (archived ones too) move to `moveTo`, each with a `field_changed` event, and get
 * closedAt when they move from an open state into a closed one, as a PATCH would.
 */
export const deleteState = defineOp({
  name: 'workflow.states.delete',
  action: 'workflow.states.delete',
  input: deleteStateInput,
  output: workflowItemDeletedSchema,
  audit: {
    action: 'workflow.states.delete',
    target: idOf,
    detail: (i, r: WorkflowItemDeleted) => `${r.moved} ticket(s) moved${i.moveTo ? ` to ${i.moveTo}` : ''}`,
  },
  run: (ctx, { id, moveTo }): Promise<WorkflowItemDeleted> =>
    changeWorkflow(ctx, 'states', async (ctx) => {
      const now = ctx.now();
      const result = await deleteOrdered<WorkflowState>(ctx, STATES, id, moveTo, (from, to) =>
        from.category === 'open' && to.category === 'closed' ? ctx.sql`closed_at = ${now}` : null,
      );
      // the board's counters of the state are all zero now (its tickets moved): no row names a state that is gone
      await ctx.sql`delete from board_counts where workspace_id = ${ctx.principal.workspaceId} and state_id = ${id}`;
      return result;
    }),
});

import { z } from 'zod';
import { defineOp } from '../operation.ts';
import { withReasons } from '../validation.ts';
import {
  itemId,
  keyField,
  moveToField,
  nameField,
  positionField,
  prioritySchema,
  workflowItemDeletedSchema,
  type Priority,
  type WorkflowItemDeleted,
} from './admin-schema.ts';
import { changeWorkflow, createItem, deleteOrdered, findItem, updateItem, type OrderedList } from './vocabulary.ts';

/**
 * Priorities (issue 22), Owner/Admin: create, rename, re-key, reorder, re-flag, delete with a
 * target. Exactly one priority is the default (a new ticket without a priority gets it); the board
 * orders by position, 0 the most urgent, and a reorder moves the tickets' board order with it.
 */
const PRIORITIES: OrderedList = {
  name: 'priorities',
  table: 'priorities',
  what: 'priority',
  unknown: 'unknown_priority',
  ticketColumn: 'priority_id',
  field: 'priorityId',
  columns: (sql) => sql`id, key, name, position, is_default as "isDefault"`,
  flags: [
    {
      column: 'is_default',
      field: 'isDefault',
      reason: 'default_required',
      message: 'One priority is always the default: make another priority the default instead.',
    },
  ],
};

export const createPriorityFields = z.object({
  key: keyField,
  name: nameField,
  position: positionField.optional(),
  isDefault: z.boolean().optional().describe('Make it the default priority (the current one stops being it)'),
});

export const updatePriorityFields = z.object({
  key: keyField.optional(),
  name: nameField.optional(),
  position: positionField.optional(),
  isDefault: z.boolean().optional().describe('true: make it the default priority; false on it is 409 `default_required`'),
});

const updatePriorityInput = withReasons(updatePriorityFields.extend({ id: itemId('priority') }), { id: 'bad_uuid' });
const deletePriorityInput = withReasons(z.object({ id: itemId('priority'), moveTo: moveToField }), { id: 'bad_uuid', moveTo: 'bad_uuid' });

const idOf = (s: { id?: unknown }) => (typeof s.id === 'string' ? s.id : null);

/** POST /workflow/priorities: a new priority, last unless it names a position. */
export const createPriority = defineOp({
  name: 'workflow.priorities.create',
  action: 'workflow.priorities.create',
  input: createPriorityFields,
  output: prioritySchema,
  audit: { action: 'workflow.priorities.create', target: (s) => (typeof s.key === 'string' ? s.key : null) },
  run: (ctx, { isDefault, ...fields }): Promise<Priority> =>
    changeWorkflow(ctx, 'priorities', (ctx) => createItem<Priority>(ctx, PRIORITIES, { ...fields, flags: { isDefault } })),
});

/** PUT /workflow/priorities/{id}: changes what is sent. */
export const updatePriority = defineOp({
  name: 'workflow.priorities.update',
  action: 'workflow.priorities.update',
  input: updatePriorityInput,
  output: prioritySchema,
  audit: { action: 'workflow.priorities.update', target: idOf },
  run: (ctx, { id, isDefault, ...fields }): Promise<Priority> =>
    changeWorkflow(ctx, 'priorities', async (ctx) =>
      updateItem(ctx, PRIORITIES, await findItem<Priority>(ctx, PRIORITIES, id), { ...fields, flags: { isDefault } }),
    ),
});

/** DELETE /workflow/priorities/{id}?moveTo=: the default priority cannot go (409); its tickets move to `moveTo`, each with an event. */
export const deletePriority = defineOp({
  name: 'workflow.priorities.delete',
  action: 'workflow.priorities.delete',
  input: deletePriorityInput,
  output: workflowItemDeletedSchema,
  audit: {
    action: 'workflow.priorities.delete',
    target: idOf,
    detail: (i, r: WorkflowItemDeleted) => `${r.moved} ticket(s) moved${i.moveTo ? ` to ${i.moveTo}` : ''}`,
  },
  run: (ctx, { id, moveTo }): Promise<WorkflowItemDeleted> => changeWorkflow(ctx, 'priorities', (ctx) => deleteOrdered<Priority>(ctx, PRIORITIES, id, moveTo)),
});

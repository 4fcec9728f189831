import { z } from 'zod';
import { defineOp } from '../operation.ts';
import { withReasons } from '../validation.ts';
import {
  itemId,
  keyField,
  moveToField,
  nameField,
  positionField,
  ticketKindSchema,
  workflowItemDeletedSchema,
  type TicketKind,
  type WorkflowItemDeleted,
} from './admin-schema.ts';
import { changeWorkflow, createItem, deleteOrdered, findItem, updateItem, type OrderedList } from './vocabulary.ts';

/**
 * Ticket kinds (issue 22), Owner/Admin: create, rename, re-key, reorder, re-flag, delete with a
 * target. Exactly one kind is the inbound kind: what a new ticket without a kind gets (email among them).
 */
const KINDS: OrderedList = {
  name: 'kinds',
  table: 'ticket_kinds',
  what: 'ticket kind',
  unknown: 'unknown_kind',
  ticketColumn: 'kind_id',
  field: 'kindId',
  columns: (sql) => sql`id, key, name, position, is_inbound as "isInbound"`,
  flags: [
    { column: 'is_inbound', field: 'isInbound', reason: 'inbound_required', message: 'One kind is always the inbound kind: make another kind it instead.' },
  ],
};

export const createKindFields = z.object({
  key: keyField,
  name: nameField,
  position: positionField.optional(),
  isInbound: z.boolean().optional().describe('Make it the inbound kind (the current one stops being it)'),
});

export const updateKindFields = z.object({
  key: keyField.optional(),
  name: nameField.optional(),
  position: positionField.optional(),
  isInbound: z.boolean().optional().describe('true: make it the inbound kind; false on it is 409 `inbound_required`'),
});

const updateKindInput = withReasons(updateKindFields.extend({ id: itemId('ticket kind') }), { id: 'bad_uuid' });
const deleteKindInput = withReasons(z.object({ id: itemId('ticket kind'), moveTo: moveToField }), { id: 'bad_uuid', moveTo: 'bad_uuid' });

const idOf = (s: { id?: unknown }) => (typeof s.id === 'string' ? s.id : null);

/** POST /workflow/kinds: a new kind, last unless it names a position. */
export const createKind = defineOp({
  name: 'workflow.kinds.create',
  action: 'workflow.kinds.create',
  input: createKindFields,
  output: ticketKindSchema,
  audit: { action: 'workflow.kinds.create', target: (s) => (typeof s.key === 'string' ? s.key : null) },
  run: (ctx, { isInbound, ...fields }): Promise<TicketKind> =>
    changeWorkflow(ctx, 'kinds', (ctx) => createItem<TicketKind>(ctx, KINDS, { ...fields, flags: { isInbound } })),
});

/** PUT /workflow/kinds/{id}: changes what is sent. */
export const updateKind = defineOp({
  name: 'workflow.kinds.update',
  action: 'workflow.kinds.update',
  input: updateKindInput,
  output: ticketKindSchema,
  audit: { action: 'workflow.kinds.update', target: idOf },
  run: (ctx, { id, isInbound, ...fields }): Promise<TicketKind> =>
    changeWorkflow(ctx, 'kinds', async (ctx) => updateItem(ctx, KINDS, await findItem<TicketKind>(ctx, KINDS, id), { ...fields, flags: { isInbound } })),
});

/** DELETE /workflow/kinds/{id}?moveTo=: the inbound kind cannot go (409); its tickets move to `moveTo`, each with an event. */
export const deleteKind = defineOp({
  name: 'workflow.kinds.delete',
  action: 'workflow.kinds.delete',
  input: deleteKindInput,
  output: workflowItemDeletedSchema,
  audit: {
    action: 'workflow.kinds.delete',
    target: idOf,
    detail: (i, r: WorkflowItemDeleted) => `${r.moved} ticket(s) moved${i.moveTo ? ` to ${i.moveTo}` : ''}`,
  },
  run: (ctx, { id, moveTo }): Promise<WorkflowItemDeleted> => changeWorkflow(ctx, 'kinds', (ctx) => deleteOrdered<TicketKind>(ctx, KINDS, id, moveTo)),
});

import { z } from 'zod';
import { moveToField } from '../../core/workflow/admin-schema.ts';
import { createKind, createKindFields, deleteKind, updateKind, updateKindFields } from '../../core/workflow/kinds.ts';
import { createLabel, createLabelFields, deleteLabel, updateLabel, updateLabelFields } from '../../core/workflow/labels.ts';
import { createPriority, createPriorityFields, deletePriority, updatePriority, updatePriorityFields } from '../../core/workflow/priorities.ts';
import { createState, createStateFields, deleteState, updateState, updateStateFields } from '../../core/workflow/states.ts';
import { defineRoute, idParam } from '../route-table.ts';

const byId = z.object({ id: idParam() });
/** DELETE's query: the target for the tickets that use the item (a UUID, parsed by the core). */
const moveToQuery = z.object({ moveTo: moveToField });

/**
 * Administration of the workflow's lists (issue 22), Owner/Admin from a session or an `admin`
 * token: the same three routes for states, kinds, priorities and labels. GET /workflow reads them.
 */
export const workflowAdminRoutes = [
  defineRoute({ method: 'POST', path: '/workflow/states', op: createState, input: { body: createStateFields }, status: 201 }),
  defineRoute({ method: 'PUT', path: '/workflow/states/:id', op: updateState, input: { params: byId, body: updateStateFields } }),
  defineRoute({ method: 'DELETE', path: '/workflow/states/:id', op: deleteState, input: { params: byId, query: moveToQuery } }),
  defineRoute({ method: 'POST', path: '/workflow/kinds', op: createKind, input: { body: createKindFields }, status: 201 }),
  defineRoute({ method: 'PUT', path: '/workflow/kinds/:id', op: updateKind, input: { params: byId, body: updateKindFields } }),
  defineRoute({ method: 'DELETE', path: '/workflow/kinds/:id', op: deleteKind, input: { params: byId, query: moveToQuery } }),
  defineRoute({ method: 'POST', path: '/workflow/priorities', op: createPriority, input: { body: createPriorityFields }, status: 201 }),
  defineRoute({ method: 'PUT', path: '/workflow/priorities/:id', op: updatePriority, input: { params: byId, body: updatePriorityFields } }),
  defineRoute({ method: 'DELETE', path: '/workflow/priorities/:id', op: deletePriority, input: { params: byId, query: moveToQuery } }),
  defineRoute({ method: 'POST', path: '/workflow/labels', op: createLabel, input: { body: createLabelFields }, status: 201 }),
  defineRoute({ method: 'PUT', path: '/workflow/labels/:id', op: updateLabel, input: { params: byId, body: updateLabelFields } }),
  defineRoute({ method: 'DELETE', path: '/workflow/labels/:id', op: deleteLabel, input: { params: byId, query: moveToQuery } }),
];

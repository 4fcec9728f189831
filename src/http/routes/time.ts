import { z } from 'zod';
import { closePeriod, listPeriods, openPeriod, openPeriodInput, reopenPeriod } from '../../core/periods/manage.ts';
import { createCategory, createCategoryInput, listCategories, projectCategoryFields, setProjectCategory } from '../../core/time/categories.ts';
import { correctTime, correctTimeFields } from '../../core/time/correct.ts';
import { deleteTime } from '../../core/time/delete.ts';
import { editTime, editTimeFields } from '../../core/time/edit.ts';
import { listTime, listTimeInput } from '../../core/time/list.ts';
import { logTime, logTimeInput } from '../../core/time/log.ts';
import { reattributeTicketTime } from '../../core/time/reattribute.ts';
import { defineRoute, idParam } from '../route-table.ts';

const byId = z.object({ id: idParam() });
/** A POST that reads only its path: a body, whatever it is, is not the operation's input. */
const pathOnly = ({ params }: { params: Record<string, unknown> }) => params;

/** Routes for time entries, periods and consultant categories (issue 5); members' settings: src/http/routes/people.ts. */
export const timeRoutes = [
  defineRoute({ method: 'GET', path: '/time', op: listTime, input: { query: listTimeInput } }),
  defineRoute({ method: 'POST', path: '/time', op: logTime, input: { body: logTimeInput }, status: 201 }),
  defineRoute({ method: 'PATCH', path: '/time/:id', op: editTime, input: { params: byId, body: editTimeFields } }),
  defineRoute({ method: 'DELETE', path: '/time/:id', op: deleteTime, input: { params: byId } }),
  defineRoute({ method: 'POST', path: '/time/:id/corrections', op: correctTime, input: { params: byId, body: correctTimeFields }, status: 201 }),
  defineRoute({ method: 'POST', path: '/time/tickets/:id/reattribute', op: reattributeTicketTime, input: { params: byId }, sent: pathOnly }),
  defineRoute({ method: 'GET', path: '/periods', op: listPeriods, input: {} }),
  defineRoute({ method: 'POST', path: '/periods', op: openPeriod, input: { body: openPeriodInput }, status: 201 }),
  defineRoute({ method: 'POST', path: '/periods/:id/close', op: closePeriod, input: { params: byId }, sent: pathOnly }),
  defineRoute({ method: 'POST', path: '/periods/:id/reopen', op: reopenPeriod, input: { params: byId }, sent: pathOnly }),
  defineRoute({ method: 'GET', path: '/categories', op: listCategories, input: {} }),
  defineRoute({ method: 'POST', path: '/categories', op: createCategory, input: { body: createCategoryInput }, status: 201 }),
  defineRoute({
    method: 'PUT',
    path: '/projects/:projectId/members/:identityId/category',
    op: setProjectCategory,
    input: { params: z.object({ projectId: idParam('projectId'), identityId: idParam('identityId') }), body: projectCategoryFields },
  }),
];

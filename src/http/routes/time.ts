import { z } from 'zod';
import { closePeriod, listPeriods, openPeriod, openPeriodInput, reopenPeriod } from '../../core/periods/manage.ts';
import { createCategory, createCategoryInput, listCategories, projectCategoryFields, setProjectCategory } from '../../core/time/categories.ts';
import { correctTime, correctTimeFields } from '../../core/time/correct.ts';
import { deleteTime } from '../../core/time/delete.ts';
import { editTime, editTimeFields } from '../../core/time/edit.ts';
import { listTime, listTimeInput } from '../../core/time/list.ts';
import { logTime, logTimeInput } from '../../core/time/log.ts';
import { memberSettingsFields, updateMemberSettings } from '../../core/time/member-settings.ts';
import { reattributeTicketTime } from '../../core/time/reattribute.ts';
import { coreCtx } from '../context.ts';
import { defineRoute, idParam, opInput } from '../route-table.ts';
import { reattributedSchema, weekSchema } from '../../core/time/schema.ts';
import { idSchema, okSchema } from '../../core/response-schema.ts';
import { periodListSchema, periodSchema } from '../../core/periods/schema.ts';
import { categoryListSchema, categorySchema, memberSettingsSchema, projectCategorySchema } from '../../core/time/categories-schema.ts';

const byId = z.object({ id: idParam() });

/** Routes for time entries, periods, consultant categories and members' time settings (issue 5). */
export const timeRoutes = [
  defineRoute({
    method: 'GET',
    path: '/time',
    action: 'time.list',
    input: { query: listTimeInput },
    output: weekSchema,
    handler: async ({ ctx, deps }) => {
      ctx.body = await listTime(coreCtx(deps, ctx), ctx.query);
    },
  }),
  defineRoute({ method: 'POST', path: '/time', op: logTime, input: { body: logTimeInput }, status: 201 }),
  defineRoute({ method: 'PATCH', path: '/time/:id', op: editTime, input: { params: byId, body: editTimeFields } }),
  defineRoute({
    method: 'DELETE',
    path: '/time/:id',
    action: 'time.delete',
    input: { params: byId },
    output: okSchema,
    handler: async ({ ctx, deps, params }) => {
      ctx.body = await deleteTime(coreCtx(deps, ctx), params);
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/time/:id/corrections',
    action: 'time.correct',
    input: { params: byId, body: correctTimeFields },
    output: { 201: idSchema },
    handler: async ({ ctx, deps, params }) => {
      ctx.status = 201;
      ctx.body = await correctTime(coreCtx(deps, ctx), opInput(ctx.request.body, params));
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/time/tickets/:id/reattribute',
    action: 'time.reattribute',
    input: { params: byId },
    output: reattributedSchema,
    handler: async ({ ctx, deps, params }) => {
      ctx.body = await reattributeTicketTime(coreCtx(deps, ctx), params);
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/periods',
    action: 'periods.list',
    input: {},
    output: periodListSchema,
    handler: async ({ ctx, deps }) => {
      ctx.body = await listPeriods(coreCtx(deps, ctx));
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/periods',
    action: 'periods.open',
    input: { body: openPeriodInput },
    output: { 201: periodSchema },
    handler: async ({ ctx, deps }) => {
      ctx.status = 201;
      ctx.body = await openPeriod(coreCtx(deps, ctx), ctx.request.body);
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/periods/:id/close',
    action: 'periods.close',
    input: { params: byId },
    output: periodSchema,
    handler: async ({ ctx, deps, params }) => {
      ctx.body = await closePeriod(coreCtx(deps, ctx), params);
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/periods/:id/reopen',
    action: 'periods.reopen',
    input: { params: byId },
    output: periodSchema,
    handler: async ({ ctx, deps, params }) => {
      ctx.body = await reopenPeriod(coreCtx(deps, ctx), params);
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/categories',
    action: 'categories.list',
    input: {},
    output: categoryListSchema,
    handler: async ({ ctx, deps }) => {
      ctx.body = await listCategories(coreCtx(deps, ctx));
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/categories',
    action: 'categories.create',
    input: { body: createCategoryInput },
    output: { 201: categorySchema },
    handler: async ({ ctx, deps }) => {
      ctx.status = 201;
      ctx.body = await createCategory(coreCtx(deps, ctx), ctx.request.body);
    },
  }),
  defineRoute({
    method: 'PATCH',
    path: '/members/:identityId',
    action: 'members.update',
    input: { params: z.object({ identityId: idParam('identityId') }), body: memberSettingsFields },
    output: memberSettingsSchema,
    handler: async ({ ctx, deps, params }) => {
      ctx.body = await updateMemberSettings(coreCtx(deps, ctx), opInput(ctx.request.body, params));
    },
  }),
  defineRoute({
    method: 'PUT',
    path: '/projects/:projectId/members/:identityId/category',
    action: 'categories.assign',
    input: { params: z.object({ projectId: idParam('projectId'), identityId: idParam('identityId') }), body: projectCategoryFields },
    output: projectCategorySchema,
    handler: async ({ ctx, deps, params }) => {
      ctx.body = await setProjectCategory(coreCtx(deps, ctx), opInput(ctx.request.body, params));
    },
  }),
];

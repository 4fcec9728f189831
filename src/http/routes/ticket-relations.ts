import { z } from 'zod';
import { addCodehostFields, addCodehostLink } from '../../core/codehost/add.ts';
import { listCodehostLinks } from '../../core/codehost/list.ts';
import { removeCodehostLink } from '../../core/codehost/remove.ts';
import { addLink, addLinkFields } from '../../core/links/add.ts';
import { removeLink } from '../../core/links/remove.ts';
import { setParent, setParentFields } from '../../core/tickets/parent.ts';
import { addViewers, addViewersFields } from '../../core/viewers/add.ts';
import { previewVisibility, visibilityPreviewFields } from '../../core/viewers/preview.ts';
import { removeViewer } from '../../core/viewers/remove.ts';
import { coreCtx } from '../context.ts';
import { defineRoute, ticketRefParam, idParam, opInput } from '../route-table.ts';
import { okSchema } from '../../core/response-schema.ts';
import { codehostLinkSchema } from '../../core/tickets/page-schema.ts';
import { addedLinkSchema } from '../../core/links/schema.ts';
import { codehostLinkListSchema } from '../../core/codehost/schema.ts';
import { addedViewersSchema, visibilityPreviewSchema } from '../../core/viewers/schema.ts';

const byRef = z.object({ ref: ticketRefParam });
const byLink = z.object({ ref: ticketRefParam, linkId: idParam('linkId') });

/** Routes for parent, links, code-host references, viewers, visibility preview (issue 3). */
export const ticketRelationsRoutes = [
  defineRoute({
    method: 'PUT',
    path: '/tickets/:ref/parent',
    action: 'tickets.parent',
    input: { params: byRef, body: setParentFields },
    output: okSchema,
    handler: async ({ ctx, deps, params }) => {
      ctx.body = await setParent(coreCtx(deps, ctx), opInput(ctx.request.body, params));
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/tickets/:ref/links',
    action: 'links.add',
    input: { params: byRef, body: addLinkFields },
    output: { 201: addedLinkSchema },
    handler: async ({ ctx, deps, params }) => {
      ctx.body = await addLink(coreCtx(deps, ctx), opInput(ctx.request.body, params));
      ctx.status = 201;
    },
  }),
  defineRoute({
    method: 'DELETE',
    path: '/tickets/:ref/links/:linkId',
    action: 'links.remove',
    input: { params: byLink },
    output: okSchema,
    handler: async ({ ctx, deps, params }) => {
      ctx.body = await removeLink(coreCtx(deps, ctx), params);
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/tickets/:ref/codehost',
    action: 'codehost.add',
    input: { params: byRef, body: addCodehostFields },
    output: { 201: codehostLinkSchema },
    handler: async ({ ctx, deps, params }) => {
      ctx.body = await addCodehostLink(coreCtx(deps, ctx), opInput(ctx.request.body, params));
      ctx.status = 201;
    },
  }),
  defineRoute({
    method: 'DELETE',
    path: '/tickets/:ref/codehost/:linkId',
    action: 'codehost.remove',
    input: { params: byLink },
    output: okSchema,
    handler: async ({ ctx, deps, params }) => {
      ctx.body = await removeCodehostLink(coreCtx(deps, ctx), params);
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/codehost/links',
    action: 'codehost.list',
    input: {},
    output: codehostLinkListSchema,
    handler: async ({ ctx, deps }) => {
      ctx.body = await listCodehostLinks(coreCtx(deps, ctx));
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/tickets/:ref/viewers',
    action: 'viewers.add',
    input: { params: byRef, body: addViewersFields },
    output: addedViewersSchema,
    handler: async ({ ctx, deps, params }) => {
      ctx.body = await addViewers(coreCtx(deps, ctx), opInput(ctx.request.body, params));
    },
  }),
  defineRoute({
    method: 'DELETE',
    path: '/tickets/:ref/viewers/:identityId',
    action: 'viewers.remove',
    input: { params: z.object({ ref: ticketRefParam, identityId: idParam('identityId') }) },
    output: okSchema,
    handler: async ({ ctx, deps, params }) => {
      ctx.body = await removeViewer(coreCtx(deps, ctx), params);
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/tickets/:ref/visibility',
    action: 'viewers.preview',
    input: { params: byRef, body: visibilityPreviewFields },
    output: visibilityPreviewSchema,
    handler: async ({ ctx, deps, params }) => {
      ctx.body = await previewVisibility(coreCtx(deps, ctx), opInput(ctx.request.body, params));
    },
  }),
];

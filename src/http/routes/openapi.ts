import { z } from 'zod';
import { notFound } from '../../core/errors.ts';
import { docsAsset, DOCS_CSP, DOCS_PAGE } from '../openapi/docs-page.ts';
import { defineRoute } from '../route-table.ts';

/**
 * The OpenAPI 3.1 document and the API reference page (issue 15): public, like the contract they
 * publish. `openApiJson` is the document of the route table these routes are part of (routes/index.ts).
 */
export const openApiRoutes = (openApiJson: () => string) => [
  defineRoute({
    method: 'GET',
    path: '/api/openapi.json',
    action: 'public',
    input: {},
    output: z.record(z.string(), z.unknown()).describe('This document.'),
    handler: ({ ctx }) => {
      ctx.type = 'application/json';
      ctx.set('Cache-Control', 'public, max-age=300');
      ctx.body = openApiJson();
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/api/docs',
    action: 'public',
    input: {},
    output: { 200: { file: ['text/html'] } },
    handler: ({ ctx }) => {
      ctx.type = 'text/html; charset=utf-8';
      ctx.set('Content-Security-Policy', DOCS_CSP);
      ctx.body = DOCS_PAGE;
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/api/docs/:asset',
    action: 'public',
    input: { params: z.object({ asset: z.string().max(100).describe('A file of the page: swagger-ui.css, swagger-ui-bundle.js, start.js.') }) },
    output: { 200: { file: ['text/css', 'text/javascript'] } },
    handler: async ({ ctx, params }) => {
      const asset = await docsAsset(params.asset);
      if (!asset) throw notFound('unknown_route', undefined, 'No such route.');
      ctx.type = asset.type;
      ctx.set('Cache-Control', 'public, max-age=3600');
      ctx.body = asset.body;
    },
  }),
];

import { protectedResourceMetadata, RESOURCE_METADATA_PATH, RESOURCE_METADATA_ROOT, resourceMetadataSchema } from '../../web/resource-metadata.ts';
import type { AppContext } from '../context.ts';
import { defineRoute } from '../route-table.ts';

/** Public metadata: any origin may read it (browser-based MCP clients discover auth with it). */
function answer(ctx: AppContext) {
  ctx.set('Access-Control-Allow-Origin', '*');
  ctx.set('Cache-Control', 'public, max-age=3600');
  ctx.body = protectedResourceMetadata(`${ctx.protocol}://${ctx.host}`);
}

/**
 * RFC 9728 Protected Resource Metadata of the MCP endpoint, at the path-suffixed well-known URL
 * that a 401 from /mcp names, and at the bare one.
 */
export const wellKnownRoutes = [
  defineRoute({ method: 'GET', path: RESOURCE_METADATA_ROOT, action: 'public', input: {}, output: resourceMetadataSchema, handler: ({ ctx }) => answer(ctx) }),
  defineRoute({ method: 'GET', path: RESOURCE_METADATA_PATH, action: 'public', input: {}, output: resourceMetadataSchema, handler: ({ ctx }) => answer(ctx) }),
];

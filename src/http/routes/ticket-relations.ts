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
import { defineRoute, ticketRefParam, idParam } from '../route-table.ts';

const byRef = z.object({ ref: ticketRefParam });
const byLink = z.object({ ref: ticketRefParam, linkId: idParam('linkId') });

/** Routes for parent, links, code-host references, viewers, visibility preview (issue 3). */
export const ticketRelationsRoutes = [
  defineRoute({ method: 'PUT', path: '/tickets/:ref/parent', op: setParent, input: { params: byRef, body: setParentFields } }),
  defineRoute({ method: 'POST', path: '/tickets/:ref/links', op: addLink, input: { params: byRef, body: addLinkFields }, status: 201 }),
  defineRoute({ method: 'DELETE', path: '/tickets/:ref/links/:linkId', op: removeLink, input: { params: byLink } }),
  defineRoute({ method: 'POST', path: '/tickets/:ref/codehost', op: addCodehostLink, input: { params: byRef, body: addCodehostFields }, status: 201 }),
  defineRoute({ method: 'DELETE', path: '/tickets/:ref/codehost/:linkId', op: removeCodehostLink, input: { params: byLink } }),
  defineRoute({ method: 'GET', path: '/codehost/links', op: listCodehostLinks, input: {} }),
  defineRoute({ method: 'POST', path: '/tickets/:ref/viewers', op: addViewers, input: { params: byRef, body: addViewersFields } }),
  defineRoute({
    method: 'DELETE',
    path: '/tickets/:ref/viewers/:identityId',
    op: removeViewer,
    input: { params: z.object({ ref: ticketRefParam, identityId: idParam('identityId') }) },
  }),
  defineRoute({ method: 'POST', path: '/tickets/:ref/visibility', op: previewVisibility, input: { params: byRef, body: visibilityPreviewFields } }),
];

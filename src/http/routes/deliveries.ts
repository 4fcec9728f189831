import { z } from 'zod';
import { resendDelivery } from '../../core/documents/resend.ts';
import { coreCtx } from '../context.ts';
import { defineRoute, idParam } from '../route-table.ts';
import { deliveryStateSchema } from '../../core/documents/delivery-schema.ts';

/** Document deliveries (issue 11): an operator's resend of a failed or unknown one. */
export const deliveriesRoutes = [
  defineRoute({
    method: 'POST',
    path: '/documents/:id/deliveries/:deliveryId/resend',
    action: 'documents.resend',
    input: { params: z.object({ id: idParam('documentId'), deliveryId: idParam('deliveryId') }) },
    output: { 202: deliveryStateSchema },
    handler: async ({ ctx, deps, params }) => {
      const delivery = await resendDelivery(coreCtx(deps, ctx), { documentId: params.id, deliveryId: params.deliveryId });
      ctx.status = 202; // accepted: the email goes out from the delivery job
      ctx.body = delivery;
    },
  }),
];

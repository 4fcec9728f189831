import { z } from 'zod';
import { resendDelivery } from '../../core/documents/resend.ts';
import { defineRoute, idParam } from '../route-table.ts';

/** Document deliveries (issue 11): an operator's resend of a failed or unknown one. */
export const deliveriesRoutes = [
  defineRoute({
    method: 'POST',
    path: '/documents/:id/deliveries/:deliveryId/resend',
    op: resendDelivery,
    input: { params: z.object({ id: idParam('documentId'), deliveryId: idParam('deliveryId') }) },
    // the path's ids only: a body names nothing here
    sent: ({ params }) => params,
    status: 202, // accepted: the email goes out from the delivery job
  }),
];

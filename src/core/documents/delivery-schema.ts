import { z } from 'zod';
import { dateTimeOut, describing, uuidOut } from '../response-schema.ts';
import type { DocumentDelivery } from './list-schema.ts';

/** A delivery as the resend answers it: the contract's delivery entry, with its id. */
export interface DeliveryState extends DocumentDelivery {
  id: string;
}

/** Response schema of POST /documents/{id}/deliveries/{deliveryId}/resend (202: the delivery job sends it). */
export const deliveryStateSchema = describing<DeliveryState>()(
  z
    .object({
      id: uuidOut,
      email: z.string().nullable(),
      state: z.enum(['pending', 'sent', 'failed', 'skipped', 'unknown']),
      detail: z.string().nullable(),
      attemptedAt: dateTimeOut.nullable(),
    })
    .meta({ id: 'Delivery' }),
);

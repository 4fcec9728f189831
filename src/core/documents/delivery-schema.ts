import { z } from 'zod';
import { dateTimeOut, describing, uuidOut } from '../response-schema.ts';
import type { DeliveryState } from './resend.ts';

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

import { deliverySchema, type DocumentDelivery } from './list-schema.ts';

/** A delivery as the resend answers it: the contract's delivery entry, with its id and kind. */
export type DeliveryState = DocumentDelivery;

/** Response schema of POST /documents/{id}/deliveries/{deliveryId}/resend (202: the delivery job sends it). */
export const deliveryStateSchema = deliverySchema;

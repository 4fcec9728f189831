import { z } from 'zod';
import { describing } from '../response-schema.ts';

/** Response schema of POST /tickets/{id}/redact. */
export const redactedSchema = describing<{ ok: true; runs: number }>()(
  z.object({ ok: z.literal(true), runs: z.number().int().describe('Billing runs whose documents were redacted too.') }).meta({ id: 'Redacted' }),
);

import { z } from 'zod';
import { describing, uuidOut } from '../response-schema.ts';

/** The workspace's vocabulary: what GET /workflow answers. */
export interface Workflow {
  states: { id: string; key: string; name: string; category: 'open' | 'closed'; position: number; isDefault: boolean; isCustomerResolve: boolean }[];
  kinds: { id: string; key: string; name: string; position: number; isInbound: boolean }[];
  priorities: { id: string; key: string; name: string; position: number; isDefault: boolean }[];
  labels: { id: string; name: string; color: string | null }[];
}

/** Response schema of GET /workflow: states, kinds, priorities and labels. */
export const workflowSchema = describing<Workflow>()(
  z
    .object({
      states: z.array(
        z.object({
          id: uuidOut,
          key: z.string(),
          name: z.string(),
          category: z.enum(['open', 'closed']),
          position: z.number().int(),
          isDefault: z.boolean(),
          isCustomerResolve: z.boolean(),
        }),
      ),
      kinds: z.array(z.object({ id: uuidOut, key: z.string(), name: z.string(), position: z.number().int(), isInbound: z.boolean() })),
      priorities: z.array(z.object({ id: uuidOut, key: z.string(), name: z.string(), position: z.number().int(), isDefault: z.boolean() })),
      labels: z.array(z.object({ id: uuidOut, name: z.string(), color: z.string().nullable() })),
    })
    .meta({ id: 'Workflow' }),
);

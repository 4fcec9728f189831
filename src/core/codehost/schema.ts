import { z } from 'zod';
import { describing, uuidOut } from '../response-schema.ts';
import { codehostLinkSchema } from '../tickets/page-schema.ts';
import type { WorkspaceCodehostLink } from './present.ts';

/** Response schema of GET /codehost/links: the references on tickets the caller sees, each with its ticket. */
export const codehostLinkListSchema = describing<{ links: WorkspaceCodehostLink[] }>()(
  z
    .object({
      links: z.array(codehostLinkSchema.extend({ ticket: z.object({ id: uuidOut, humanId: z.string(), title: z.string() }) })),
    })
    .meta({ id: 'CodehostLinkList' }),
);

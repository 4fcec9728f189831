import { z } from 'zod';
import { describing, uuidOut } from '../response-schema.ts';
import type { VisibilityPreview } from './audience.ts';

/** Response schemas of POST /tickets/{ref}/viewers and POST /tickets/{ref}/visibility. */

export const addedViewersSchema = describing<{ added: string[] }>()(
  z.object({ added: z.array(uuidOut).describe('The identities that became viewers (those already viewers are left out).') }).meta({ id: 'AddedViewers' }),
);

const clientPerson = z.object({ identityId: uuidOut, name: z.string(), clientName: z.string().nullable() });

export const visibilityPreviewSchema = describing<VisibilityPreview>()(
  z
    .object({
      audience: z.enum(['internal', 'client']),
      workspaceUsers: z.number().int().describe('Workspace users who can see the ticket (they read either audience).'),
      clientPeople: z.array(clientPerson).describe('Client people who would read a `client` comment; empty for `internal`.'),
      willGainAccess: z.array(clientPerson).describe('Mentioned client people who would become viewers.'),
      denied: z.array(z.object({ identityId: uuidOut, name: z.string() })).describe('Mentions that would be refused.'),
    })
    .meta({ id: 'VisibilityPreview' }),
);

import { z } from 'zod';
import { describing, uuidOut } from '../response-schema.ts';

/** Response schema of POST /tickets/{ref}/links. */
export const addedLinkSchema = describing<{ id: string | null }>()(
  z.object({ id: uuidOut.nullable().describe('The new link; null when the same link already existed (nothing changed).') }).meta({ id: 'AddedLink' }),
);

import { z } from 'zod';
import { describing, uuidOut } from '../response-schema.ts';
import { idField } from '../validation.ts';

/**
 * The administration of the workflow's vocabularies (issue 22): the fields a write sends and the
 * items it answers with, one shape per vocabulary, as GET /workflow lists them.
 */

/** The database's own rule for keys (sql/001_foundation.sql), so a bad key is a 400, never a check violation. */
export const KEY_PATTERN = /^[a-z][a-z0-9_]{0,39}$/;

export const keyField = z
  .string()
  .regex(KEY_PATTERN, 'A lower-case letter, then up to 39 lower-case letters, digits or underscores.')
  .describe('Stable key, unique in the workspace: a lower-case letter, then up to 39 lower-case letters, digits or underscores');
export const nameField = z.string().trim().min(1).max(60).describe('Display name, 1-60 characters');
export const positionField = z
  .int()
  .min(0)
  .max(1000)
  .describe('Where it goes in the list, 0 first (the others move down; past the end is the end). Positions are renumbered 0, 1, 2, ...');
export const categoryField = z.enum(['open', 'closed']).describe('Tickets in a closed state count as done; the default state must be open');
export const colorField = z
  .string()
  .regex(/^#[0-9a-fA-F]{6}$/, 'A colour as #rrggbb.')
  .nullable()
  .describe('A colour as #rrggbb, or null for none');

/** The path's id of the item (400 `bad_uuid`). */
export const itemId = (what: string) => idField(`The ${what}.`);

/** DELETE's query: where the tickets that use the item go. */
export const moveToField = idField('Where the tickets that use it go: another item of the same list (required while any ticket uses it)').optional();

export interface WorkflowState {
  id: string;
  key: string;
  name: string;
  category: 'open' | 'closed';
  position: number;
  isDefault: boolean;
  isCustomerResolve: boolean;
}
export interface TicketKind {
  id: string;
  key: string;
  name: string;
  position: number;
  isInbound: boolean;
}
export interface Priority {
  id: string;
  key: string;
  name: string;
  position: number;
  isDefault: boolean;
}
export interface Label {
  id: string;
  name: string;
  color: string | null;
}
export interface WorkflowItemDeleted {
  ok: true;
  /** Tickets moved to `moveTo`, each with a `field_changed` event. */
  moved: number;
}

export const workflowStateSchema = describing<WorkflowState>()(
  z
    .object({
      id: uuidOut,
      key: z.string(),
      name: z.string(),
      category: z.enum(['open', 'closed']),
      position: z.number().int(),
      isDefault: z.boolean().describe('New tickets start here; exactly one state is the default, and it is open'),
      isCustomerResolve: z.boolean().describe('Where client users resolve a ticket; exactly one state is'),
    })
    .meta({ id: 'WorkflowState' }),
);

export const ticketKindSchema = describing<TicketKind>()(
  z
    .object({
      id: uuidOut,
      key: z.string(),
      name: z.string(),
      position: z.number().int(),
      isInbound: z.boolean().describe('New tickets without a kind (email among them) get this one; exactly one kind is'),
    })
    .meta({ id: 'TicketKind' }),
);

export const prioritySchema = describing<Priority>()(
  z
    .object({
      id: uuidOut,
      key: z.string(),
      name: z.string(),
      position: z.number().int().describe('0 is the most urgent: the board orders by it'),
      isDefault: z.boolean().describe('New tickets without a priority get this one; exactly one priority is'),
    })
    .meta({ id: 'Priority' }),
);

export const labelSchema = describing<Label>()(z.object({ id: uuidOut, name: z.string(), color: z.string().nullable() }).meta({ id: 'Label' }));

export const workflowItemDeletedSchema = describing<WorkflowItemDeleted>()(
  z
    .object({
      ok: z.literal(true),
      moved: z.number().int().describe('Tickets moved to `moveTo`, each with a `field_changed` event on its timeline'),
    })
    .meta({ id: 'WorkflowItemDeleted' }),
);

import { z } from 'zod';
import { dateOut, dateTimeOut, describing, uuidOut } from '../response-schema.ts';
import type { RunEntry } from './list.ts';
import type { BillingRun } from './present.ts';
import type { RunPreview } from './start.ts';

/** Response schemas of billing runs, their previews (dryRun) and their entry sets. */

const totals = {
  entryCount: z.number().int(),
  minutes: z.number().int(),
  billableMinutes: z.number().int().describe('Minutes charged (`paid` lines).'),
};
const lineTotals = { ...totals, freeMinutes: z.number().int(), bankMinutes: z.number().int() };

export const billingRunSchema = describing<BillingRun>()(
  z
    .object({
      id: uuidOut,
      periodId: uuidOut,
      periodStart: dateOut,
      periodEnd: dateOut,
      status: z.enum(['allocating', 'rendering', 'delivering', 'completed', 'failed', 'voided']),
      dryRun: z.literal(false),
      ...totals,
      clients: z.array(z.object({ clientId: uuidOut, clientName: z.string(), ...lineTotals })),
      documentIds: z.array(uuidOut).describe("The run's current documents (superseded versions left out)."),
      createdBy: uuidOut.nullable(),
      createdAt: dateTimeOut,
      completedAt: dateTimeOut.nullable(),
      voidedAt: dateTimeOut.nullable(),
      voidedBy: uuidOut.nullable(),
      voidReason: z.string().nullable(),
      error: z.string().nullable().describe('Why a failed run failed.'),
    })
    .meta({ id: 'BillingRun' }),
);

export const runPreviewSchema = describing<RunPreview>()(
  z
    .object({
      dryRun: z.literal(true),
      periodId: uuidOut,
      periodStart: dateOut,
      periodEnd: dateOut,
      ...totals,
      clients: z.array(
        z.object({
          clientId: uuidOut,
          clientName: z.string(),
          ...lineTotals,
          projects: z.array(z.object({ projectId: uuidOut, projectKey: z.string(), projectName: z.string(), ...lineTotals, entryIds: z.array(uuidOut) })),
          banks: z.array(z.object({ bankId: uuidOut, name: z.string(), minutes: z.number().int() })),
          documents: z.array(z.object({ scope: z.enum(['combined', 'project']), projectId: uuidOut.nullable() })),
        }),
      ),
    })
    .meta({ id: 'RunPreview' }),
);

export const billingRunListSchema = z.object({ items: z.array(billingRunSchema), nextCursor: z.string().nullable() }).meta({ id: 'BillingRunList' });

const runEntrySchema = describing<RunEntry>()(
  z.object({
    entryId: uuidOut,
    ticketId: uuidOut,
    ticketRef: z.string(),
    userId: uuidOut,
    userName: z.string(),
    clientId: uuidOut,
    projectId: uuidOut,
    spentOn: dateOut,
    minutes: z.number().int(),
    policy: z.enum(['paid', 'free', 'bank']),
    bankId: uuidOut.nullable(),
    correctsEntryId: uuidOut.nullable(),
    live: z.boolean().describe('False once the run is voided (the entry was released).'),
  }),
);

export const runEntryPageSchema = z.object({ items: z.array(runEntrySchema), nextCursor: z.string().nullable() }).meta({ id: 'RunEntryPage' });

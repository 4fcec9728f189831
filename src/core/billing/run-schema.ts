import { z } from 'zod';
import { dateOut, dateTimeOut, describing, uuidOut } from '../response-schema.ts';
import { runChangesSchema, type RunChanges } from './dry-run-changes.ts';
import type { BillingRun, LineTotals } from './present.ts';

/**
 * Response schemas of billing runs, their previews (dryRun) and their entry sets, with the result
 * types they describe (here, not in the operations that declare them as output, so no circle).
 */

export interface PreviewProject extends LineTotals {
  projectId: string;
  projectKey: string;
  projectName: string;
  /** The entries the run would bill, in this project. */
  entryIds: string[];
}

export interface PreviewClient extends LineTotals {
  clientId: string;
  clientName: string;
  projects: PreviewProject[];
  /** Draw-downs per bank. */
  banks: { bankId: string; name: string; minutes: number }[];
  /** The timesheets that would be made: one combined, or one per project (the client's layout). */
  documents: { scope: 'combined' | 'project'; projectId: string | null }[];
}

/** What a run over the period would bill (POST /billing/runs with dryRun). */
export interface RunPreview extends Omit<LineTotals, 'freeMinutes' | 'bankMinutes'> {
  dryRun: true;
  periodId: string;
  periodStart: string;
  periodEnd: string;
  clients: PreviewClient[];
  /** What the run would charge per client, in the client's currency (empty in a workspace without rates). */
  money: PreviewMoney[];
  /** Entries without a rate (paid ones block the run unless billed at zero: billUnratedAtZero). */
  warnings: PreviewWarning[];
  /** What changed since the period's last run (dry-run-changes.ts); null when it has none. */
  changes: RunChanges | null;
}

export interface PreviewMoney {
  clientId: string;
  currency: string;
  /** Charged: the sum of the paid lines' rounded amounts, in minor units. */
  amountMinor: number;
  /** What every line would cost at its rate (free and bank time included). */
  listAmountMinor: number;
}

export interface PreviewWarning {
  reason: 'missing_rate';
  entryId: string;
  clientId: string;
  projectId: string;
  categoryId: string | null;
  spentOn: string;
  policy: 'paid' | 'free' | 'bank';
}

/** One line of a run's exact entry set. */
export interface RunEntry {
  entryId: string;
  ticketId: string;
  ticketRef: string;
  userId: string;
  userName: string;
  clientId: string;
  projectId: string;
  spentOn: string;
  minutes: number;
  policy: 'paid' | 'free' | 'bank';
  bankId: string | null;
  correctsEntryId: string | null;
  /** False once the run is voided (the entry was released). */
  live: boolean;
}

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
      status: z
        .enum(['allocating', 'rendering', 'awaiting_approval', 'delivering', 'completed', 'failed', 'voided'])
        .describe(
          '`awaiting_approval` (issue 23, additive): rendered, and holding timesheets of clients whose delivery is `review`; nothing of them is sent, nor shown to client users, until POST /billing/runs/{id}/approve.',
        ),
      dryRun: z.literal(false),
      ...totals,
      clients: z.array(
        z.object({
          clientId: uuidOut,
          clientName: z.string(),
          ...lineTotals,
          // issue 23, additive: present on a priced run only (a workspace without rates bills hours only)
          currency: z.string().optional().describe("The client's currency (ISO 4217) fixed at allocation; absent on an hours-only run."),
          amountMinor: z
            .number()
            .int()
            .optional()
            .describe("Charged: the sum of the client's rounded paid lines, in minor units; absent on an hours-only run."),
          listAmountMinor: z
            .number()
            .int()
            .optional()
            .describe('What all its lines cost at their rates, free and bank time included; absent on an hours-only run.'),
        }),
      ),
      documentIds: z.array(uuidOut).describe("The run's current documents (superseded versions left out)."),
      createdBy: uuidOut.nullable(),
      createdAt: dateTimeOut,
      completedAt: dateTimeOut.nullable(),
      voidedAt: dateTimeOut.nullable(),
      voidedBy: uuidOut.nullable(),
      voidReason: z.string().nullable(),
      poNumber: z.string().nullable().describe('The purchase-order number printed on the run’s timesheets (issue 23, additive); null: none.'),
      approvedAt: dateTimeOut.nullable().describe('When the run was approved (runs held for review only).'),
      approvedBy: uuidOut.nullable(),
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
      money: z
        .array(z.object({ clientId: uuidOut, currency: z.string(), amountMinor: z.number().int(), listAmountMinor: z.number().int() }))
        .describe("What the run would charge per client, in minor units of the client's currency (empty without rates)."),
      warnings: z
        .array(
          z.object({
            reason: z.literal('missing_rate'),
            entryId: uuidOut,
            clientId: uuidOut,
            projectId: uuidOut,
            categoryId: uuidOut.nullable(),
            spentOn: dateOut,
            policy: z.enum(['paid', 'free', 'bank']),
          }),
        )
        .describe('Entries without a rate; paid ones refuse the run (409 missing_rate) unless billUnratedAtZero.'),
      changes: runChangesSchema,
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

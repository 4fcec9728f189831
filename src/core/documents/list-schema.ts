import { z } from 'zod';
import { dateOut, dateTimeOut, describing, uuidOut } from '../response-schema.ts';
import type { DocumentScope } from './access.ts';

/**
 * Response schemas of the contract's Document, DocumentList and document grants, with the result
 * types they describe (here, not in the operations that declare them as output, so no circle).
 */

export interface DocumentDelivery {
  /** The delivery's id: what POST /documents/{id}/deliveries/{deliveryId}/resend takes. */
  id: string;
  /** `timesheet`: the timesheet email; `void_notice`: the notice that its run was voided (issue 23). */
  kind: 'timesheet' | 'void_notice';
  email: string | null;
  state: 'pending' | 'sent' | 'failed' | 'skipped' | 'unknown';
  detail: string | null;
  attemptedAt: string | null;
}

/** The contract's Document (a client timesheet). */
export interface TimesheetDocument {
  id: string;
  runId: string;
  number: string;
  scope: 'combined' | 'project';
  projectId: string | null;
  projectName: string | null;
  clientId: string;
  clientName: string;
  periodStart: string;
  format: 'html' | 'pdf' | 'csv';
  version: number;
  locale: string;
  checksum: string;
  bytes: number;
  voided: boolean;
  redacted: boolean;
  createdAt: string;
  deliveries: DocumentDelivery[];
}

export interface DocumentList {
  documents: TimesheetDocument[];
  scope: DocumentScope;
}

/** The contract's Document grant entry. */
export interface DocumentGrant {
  id: string;
  identityId: string;
  name: string;
  email: string | null;
}

export type GrantCandidate = Omit<DocumentGrant, 'id'>;

export interface DocumentGrants {
  grants: DocumentGrant[];
  candidates: GrantCandidate[];
}

/** One delivery of a document's timesheet (the contract's entry, with its id and kind: issue 23, additive). */
export const deliverySchema = describing<DocumentDelivery>()(
  z
    .object({
      id: uuidOut.describe('The delivery, as the resend route takes it.'),
      kind: z
        .enum(['timesheet', 'void_notice'])
        .describe('`timesheet`: the email carrying the document; `void_notice`: the notice, after its run was voided, to a recipient who received it.'),
      email: z.string().nullable(),
      state: z.enum(['pending', 'sent', 'failed', 'skipped', 'unknown']),
      detail: z.string().nullable(),
      attemptedAt: dateTimeOut.nullable(),
    })
    .meta({ id: 'Delivery' }),
);

export const documentSchema = describing<TimesheetDocument>()(
  z
    .object({
      id: uuidOut,
      runId: uuidOut,
      number: z.string(),
      scope: z.enum(['combined', 'project']),
      projectId: uuidOut.nullable(),
      projectName: z.string().nullable(),
      clientId: uuidOut,
      clientName: z.string(),
      periodStart: dateOut,
      format: z.enum(['html', 'pdf', 'csv']),
      version: z.number().int(),
      locale: z.string(),
      checksum: z.string(),
      bytes: z.number().int(),
      voided: z.boolean(),
      redacted: z.boolean(),
      createdAt: dateTimeOut,
      deliveries: z.array(deliverySchema),
    })
    .meta({ id: 'Document' }),
);

export const documentListSchema = describing<DocumentList>()(
  z
    .object({
      documents: z.array(documentSchema),
      scope: z.enum(['all', 'client', 'projects', 'none']).describe('What the caller may download; `none` with an empty list is not an error.'),
    })
    .meta({ id: 'DocumentList' }),
);

const candidate = z.object({ identityId: uuidOut, name: z.string(), email: z.string().nullable() });

export const documentGrantsSchema = describing<DocumentGrants>()(
  z.object({ grants: z.array(candidate.extend({ id: uuidOut })), candidates: z.array(candidate) }).meta({ id: 'DocumentGrants' }),
);

import { z } from 'zod';
import { describing, uuidOut, dateTimeOut } from '../response-schema.ts';
import { currencyField } from '../rates/money.ts';
import { billingModeField, billingPolicyField } from '../tickets/schemas.ts';

/**
 * A client's input fields (shared by create and PATCH, REST, the CLI and the console) and the
 * response schemas of the client routes.
 */

export const TIMESHEET_LAYOUTS = ['combined', 'project'] as const;
/** How a timesheet lists the time (issue 23): a row per ticket (and billing kind), or a row per time entry. */
export const TIMESHEET_LINES = ['ticket', 'entry'] as const;

export const clientNameField = z.string().trim().min(1).max(200).describe('Client name, 1-200 characters.');
export const clientCodeField = z
  .string()
  .trim()
  .toUpperCase()
  .regex(/^[A-Z0-9]{2,12}$/)
  .describe('Short code, 2-12 letters or digits (upper-cased), unique in the workspace; it starts document numbers (CODE-YYYY-NNNN).');
export const localeField = z.string().trim().min(2).max(35).describe('BCP 47 locale of the client’s timesheets (dates and numbers), e.g. en-GB or de-DE.');
export const layoutField = z.enum(TIMESHEET_LAYOUTS).describe('combined: one timesheet per client with a section per project; project: one per project.');
export const clientPolicyField = billingPolicyField
  .unwrap()
  .describe('Default billing of the client’s projects: "paid", "free" or "bank:<bankId>" (a bank of this client).');
export const clientCurrencyField = currencyField.describe('ISO 4217 currency of the client’s documents (amounts); only rates in it apply to its time.');
export const taxRateField = z.number().int().min(0).max(10000).describe('Tax rate in basis points (1900 = 19 %); 0: no tax line.');
export const taxLabelField = z.string().trim().min(1).max(60).nullable().describe('The tax line’s label, e.g. "VAT 19 %".');
export const taxNoteField = z
  .string()
  .trim()
  .min(1)
  .max(300)
  .nullable()
  .describe('A note on the document, e.g. an exemption ("Reverse charge: VAT to be accounted for by the recipient").');
export const paymentTermsField = z.number().int().min(0).max(365).nullable().describe('Days from the document date to the due date; null: no due date.');
export const billingAddressField = z
  .string()
  .transform((s) => s.replace(/\r\n?/g, '\n').trim())
  .pipe(
    z
      .string()
      .min(1)
      .max(500)
      .refine((s) => !/[^\P{Cc}\n]/u.test(s), 'No control characters but line breaks.'),
  )
  .nullable()
  .describe('The client’s billing address on its documents, lines separated by \\n (≤500); null: none.');
export const clientTaxIdField = z
  .string()
  .trim()
  .min(1)
  .max(50)
  .refine((s) => !/\p{Cc}/u.test(s), 'No control characters.')
  .nullable()
  .describe('The client’s tax id (e.g. VAT number) on its documents; null: none.');
export const timesheetLinesField = z
  .enum(TIMESHEET_LINES)
  .describe('ticket: a row per ticket and billing kind; entry: a row per time entry (date, person, hours, rate, amount).');
export const deliveryField = z
  .enum(['review', 'automatic'])
  .describe(
    'How the client’s timesheets go out (issue 23): review: held after rendering until an operator approves the run; automatic: emailed once rendered.',
  );
export const clientModeField = billingModeField.unwrap().describe('Default billing mode of the client’s projects: "period" or "on_close".');

export interface Client {
  id: string;
  name: string;
  code: string;
  locale: string;
  timesheetLayout: (typeof TIMESHEET_LAYOUTS)[number];
  billingPolicy: string;
  billingMode: 'period' | 'on_close';
  /** ISO 4217: the currency of the client's documents. */
  currency: string;
  taxRateBasisPoints: number;
  taxLabel: string | null;
  taxNote: string | null;
  paymentTermsDays: number | null;
  billingAddress: string | null;
  taxId: string | null;
  timesheetLines: (typeof TIMESHEET_LINES)[number];
  /** `review`: the client's timesheets wait for the run's approval; `automatic`: emailed once rendered. */
  delivery: 'review' | 'automatic';
  archivedAt: string | null;
  createdAt: string;
}

export interface ClientUser {
  id: string;
  name: string;
  email: string | null;
  role: 'client' | 'client_elevated';
}

export interface ClientDetail extends Client {
  /** The client's users (memberships of a client role), by name. */
  users: ClientUser[];
}

export interface Recipient {
  id: string;
  email: string | null;
  name: string | null;
  optedOut: boolean;
  /** The client user this recipient is (a billing contact with a login); null: an address only. */
  identityId: string | null;
}

const clientFields = {
  id: uuidOut,
  name: z.string(),
  code: z.string(),
  locale: z.string(),
  timesheetLayout: z.enum(TIMESHEET_LAYOUTS),
  billingPolicy: z.string(),
  billingMode: z.enum(['period', 'on_close']),
  currency: z.string().describe('ISO 4217 currency of the client’s documents.'),
  taxRateBasisPoints: z.number().int(),
  taxLabel: z.string().nullable(),
  taxNote: z.string().nullable(),
  paymentTermsDays: z.number().int().nullable(),
  billingAddress: z.string().nullable().describe('Billing address on the client’s documents.'),
  taxId: z.string().nullable().describe('The client’s tax id on its documents.'),
  timesheetLines: z.enum(TIMESHEET_LINES).describe('A row per ticket or per time entry on the client’s timesheets.'),
  delivery: z.enum(['review', 'automatic']).describe('review: timesheets wait for the run’s approval; automatic: emailed once rendered.'),
  archivedAt: dateTimeOut.nullable().describe('When the client was archived; null: active.'),
  createdAt: dateTimeOut,
};

export const clientSchema = describing<Client>()(z.object(clientFields).meta({ id: 'Client' }));

export const clientListSchema = describing<{ clients: Client[] }>()(z.object({ clients: z.array(clientSchema) }).meta({ id: 'ClientList' }));

export const clientUserSchema = describing<ClientUser>()(
  z.object({ id: uuidOut, name: z.string(), email: z.string().nullable(), role: z.enum(['client', 'client_elevated']) }).meta({ id: 'ClientUser' }),
);

export const clientDetailSchema = describing<ClientDetail>()(
  z.object({ ...clientFields, users: z.array(clientUserSchema).describe('The client’s users, by name.') }).meta({ id: 'ClientDetail' }),
);

export const recipientSchema = describing<Recipient>()(
  z
    .object({
      id: uuidOut,
      email: z.string().nullable(),
      name: z.string().nullable(),
      optedOut: z.boolean(),
      identityId: uuidOut.nullable().describe('The client user this recipient is; null: an address only.'),
    })
    .meta({ id: 'BillingRecipient' }),
);

export const recipientListSchema = describing<{ recipients: Recipient[] }>()(
  z.object({ recipients: z.array(recipientSchema) }).meta({ id: 'BillingRecipientList' }),
);

import { z } from 'zod';
import { defineOp } from '../operation.ts';
import { describing, uuidOut } from '../response-schema.ts';
import type { Ctx } from '../ctx.ts';
import { invalid } from '../errors.ts';
import { isStorableString } from '../input.ts';
import { singleAddress } from '../mail/address.ts';
import { canonicalTimezone } from '../time/dates.ts';
import { normaliseBic, normaliseIban } from './bank.ts';
import { readLogo } from './logo.ts';

/**
 * What a workspace sets for itself (issue 22): its name, a new member's defaults, and how its emails
 * show their sender; and what its timesheets print about the agency (issue 23): legal name,
 * address, tax id, bank details and logo, fixed on each timesheet when its run is allocated.
 */
export interface WorkspaceSettings {
  id: string;
  slug: string;
  name: string;
  defaultTimezone: string;
  defaultWeeklyTargetMinutes: number | null;
  mailFromName: string | null;
  mailReplyTo: string | null;
  legalName: string | null;
  address: string | null;
  taxId: string | null;
  bankAccountHolder: string | null;
  bankIban: string | null;
  bankBic: string | null;
  bankDetails: string | null;
  /** The logo's type and size; the image itself is only ever embedded in the documents. */
  logo: { contentType: string; bytes: number } | null;
}

export const workspaceSettingsSchema = describing<WorkspaceSettings>()(
  z
    .object({
      id: uuidOut,
      slug: z.string(),
      name: z.string(),
      defaultTimezone: z.string().describe('IANA time zone a new member starts with.'),
      defaultWeeklyTargetMinutes: z.number().int().nullable().describe('Weekly target a new member starts with; null for none.'),
      mailFromName: z.string().nullable().describe('The sender name outgoing emails show (the address is the server’s MAIL_FROM); null: MAIL_FROM’s own name.'),
      mailReplyTo: z.string().nullable().describe('The Reply-To of invitations and password resets; null for none.'),
      legalName: z.string().nullable().describe('The agency’s legal name on documents; null: the workspace name.'),
      address: z.string().nullable().describe('The agency’s postal address on documents (lines separated by \\n).'),
      taxId: z.string().nullable().describe('The agency’s tax id (e.g. VAT number) on documents.'),
      bankAccountHolder: z.string().nullable().describe('Bank details under the total: the account holder.'),
      bankIban: z.string().nullable().describe('IBAN, normalised (no spaces, upper case).'),
      bankBic: z.string().nullable().describe('BIC, upper case.'),
      bankDetails: z.string().nullable().describe('Free-text payment details (for accounts without an IBAN).'),
      logo: z.object({ contentType: z.string(), bytes: z.number().int() }).nullable().describe('The logo documents embed (PNG or JPEG); null: none.'),
    })
    .meta({ id: 'WorkspaceSettings' }),
);

/** A one-line display name: no control characters (a line break would end the header it goes in). */
const displayName = z
  .string()
  .trim()
  .min(1)
  .max(100)
  .refine((s) => isStorableString(s) && !/\p{Cc}/u.test(s), 'No control characters.');

export const settingsFields = z.object({
  name: displayName.describe('The workspace name (what emails sign with).'),
  defaultTimezone: z.string().min(1).max(64).describe('IANA time zone, e.g. Europe/Berlin, a new member starts with'),
  defaultWeeklyTargetMinutes: z.int().min(0).max(10_080).nullable().describe('Minutes per week a new member starts with (0-10080); null for none'),
  mailFromName: displayName.nullable().describe('The sender name outgoing emails show; null: the server’s MAIL_FROM name'),
  mailReplyTo: z.string().max(254).nullable().describe('One bare address invitations and password resets name as Reply-To; null for none'),
  legalName: oneLine(200).nullable().describe('The agency’s legal name on documents; null: the workspace name'),
  address: lines(500).nullable().describe('The agency’s postal address on documents, lines separated by \\n (≤500)'),
  taxId: oneLine(50).nullable().describe('The agency’s tax id (e.g. a VAT number) on documents'),
  bankAccountHolder: oneLine(200).nullable().describe('Bank details printed under the total: the account holder'),
  bankIban: z.string().max(50).nullable().describe('IBAN (checked, stored without spaces); 400 bad_iban'),
  bankBic: z.string().max(20).nullable().describe('BIC of 8 or 11 characters; 400 bad_bic'),
  bankDetails: lines(500).nullable().describe('Free-text payment details, e.g. for an account without an IBAN (≤500)'),
  logo: z
    .string()
    .max(400_000)
    .nullable()
    .describe('The logo, a PNG or JPEG file base64-encoded (≤256 KiB decoded; the type is read from its bytes); null removes it. 400 bad_logo, logo_too_large'),
});
const updateSettingsInput = settingsFields.partial();

/** One line of text for a document: no control characters. */
function oneLine(max: number) {
  return z
    .string()
    .trim()
    .min(1)
    .max(max)
    .refine((s) => isStorableString(s) && !/\p{Cc}/u.test(s), 'No control characters.');
}

/** Text of several lines for a document (an address): line breaks are kept (CRLF read as LF), no other control character. */
function lines(max: number) {
  return z
    .string()
    .transform((s) => s.replace(/\r\n?/g, '\n').trim())
    .pipe(
      z
        .string()
        .min(1)
        .max(max)
        .refine((s) => isStorableString(s) && !/[^\P{Cc}\n]/u.test(s), 'No control characters but line breaks.'),
    );
}

/** Reads the settings of the caller's workspace. */
async function readSettings(ctx: Ctx): Promise<WorkspaceSettings> {
  const [row] = await ctx.sql<WorkspaceSettings[]>`
    select id, slug, name, default_timezone as "defaultTimezone", default_weekly_target_minutes as "defaultWeeklyTargetMinutes",
           mail_from_name as "mailFromName", mail_reply_to as "mailReplyTo", legal_name as "legalName", address, tax_id as "taxId",
           bank_account_holder as "bankAccountHolder", bank_iban as "bankIban", bank_bic as "bankBic", bank_details as "bankDetails",
           (select json_build_object('contentType', l.content_type, 'bytes', octet_length(l.content)) from logos l where l.id = w.logo_id) as logo
    from workspaces w where id = ${ctx.principal.workspaceId}`;
  return row!;
}

/** GET /settings (Owner/Admin: a session or an admin-scoped token). */
export const getSettings = defineOp({
  name: 'settings.read',
  action: 'settings.read',
  input: z.object({}),
  output: workspaceSettingsSchema,
  run: (ctx) => readSettings(ctx),
});

/**
 * PATCH /settings: the fields sent change, the rest stay. The time zone must be an IANA one; the
 * reply-to one bare address, read by the mailer's own parser (as billing recipients are).
 */
export const updateSettings = defineOp({
  name: 'settings.update',
  action: 'settings.update',
  input: updateSettingsInput,
  output: workspaceSettingsSchema,
  tx: true,
  audit: { action: 'settings.update', target: () => 'workspace', detail: (input) => Object.keys(input).sort().join(', ') || null },
  run: async (ctx, input) => {
    let timezone: string | null = null;
    if (input.defaultTimezone !== undefined) {
      timezone = canonicalTimezone(input.defaultTimezone);
      if (!timezone) throw invalid('unknown_timezone', { field: 'defaultTimezone' }, 'defaultTimezone must be an IANA time zone such as Europe/Berlin.');
    }
    let replyTo: string | null = null;
    if (input.mailReplyTo) {
      replyTo = singleAddress(input.mailReplyTo);
      if (!replyTo) throw invalid('bad_address', { field: 'mailReplyTo' }, 'mailReplyTo must be exactly one bare email address.');
    }
    const iban = input.bankIban ? normaliseIban(input.bankIban) : null;
    const bic = input.bankBic ? normaliseBic(input.bankBic) : null;
    const { sql } = ctx;
    // a new logo is a new row: timesheets already allocated keep the one they were made with
    let logoId: string | null = null;
    if (typeof input.logo === 'string') {
      const logo = readLogo(input.logo);
      const [row] = await sql<{ id: string }[]>`
        insert into logos (workspace_id, content_type, content) values (${ctx.principal.workspaceId}, ${logo.contentType}, ${logo.content}) returning id`;
      logoId = row!.id;
    }
    const keep = <T>(v: T | undefined, column: string, value: T) => (v === undefined ? sql(column) : sql`${value as never}`);
    await sql`
      update workspaces set
        name = ${keep(input.name, 'name', input.name ?? null)},
        default_timezone = ${keep(input.defaultTimezone, 'default_timezone', timezone)},
        default_weekly_target_minutes = ${input.defaultWeeklyTargetMinutes === undefined ? sql`default_weekly_target_minutes` : sql`${input.defaultWeeklyTargetMinutes}::int`},
        mail_from_name = ${keep(input.mailFromName, 'mail_from_name', input.mailFromName ?? null)},
        mail_reply_to = ${keep(input.mailReplyTo, 'mail_reply_to', replyTo)},
        legal_name = ${keep(input.legalName, 'legal_name', input.legalName ?? null)},
        address = ${keep(input.address, 'address', input.address ?? null)},
        tax_id = ${keep(input.taxId, 'tax_id', input.taxId ?? null)},
        bank_account_holder = ${keep(input.bankAccountHolder, 'bank_account_holder', input.bankAccountHolder ?? null)},
        bank_iban = ${keep(input.bankIban, 'bank_iban', iban)},
        bank_bic = ${keep(input.bankBic, 'bank_bic', bic)},
        bank_details = ${keep(input.bankDetails, 'bank_details', input.bankDetails ?? null)},
        logo_id = ${input.logo === undefined ? sql`logo_id` : sql`${logoId}::uuid`}
      where id = ${ctx.principal.workspaceId}`;
    return readSettings(ctx);
  },
});

import { z } from 'zod';
import { defineOp } from '../operation.ts';
import { describing, uuidOut } from '../response-schema.ts';
import type { Ctx } from '../ctx.ts';
import { invalid } from '../errors.ts';
import { isStorableString } from '../input.ts';
import { singleAddress } from '../mail/address.ts';
import { canonicalTimezone } from '../time/dates.ts';

/** What a workspace sets for itself (issue 22): its name, a new member's defaults, and how its emails show their sender. */
export interface WorkspaceSettings {
  id: string;
  slug: string;
  name: string;
  defaultTimezone: string;
  defaultWeeklyTargetMinutes: number | null;
  mailFromName: string | null;
  mailReplyTo: string | null;
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
});
const updateSettingsInput = settingsFields.partial();

/** Reads the settings of the caller's workspace. */
async function readSettings(ctx: Ctx): Promise<WorkspaceSettings> {
  const [row] = await ctx.sql<WorkspaceSettings[]>`
    select id, slug, name, default_timezone as "defaultTimezone", default_weekly_target_minutes as "defaultWeeklyTargetMinutes",
           mail_from_name as "mailFromName", mail_reply_to as "mailReplyTo"
    from workspaces where id = ${ctx.principal.workspaceId}`;
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
    const { sql } = ctx;
    const keep = <T>(v: T | undefined, column: string, value: T) => (v === undefined ? sql(column) : sql`${value as never}`);
    await sql`
      update workspaces set
        name = ${keep(input.name, 'name', input.name ?? null)},
        default_timezone = ${keep(input.defaultTimezone, 'default_timezone', timezone)},
        default_weekly_target_minutes = ${input.defaultWeeklyTargetMinutes === undefined ? sql`default_weekly_target_minutes` : sql`${input.defaultWeeklyTargetMinutes}::int`},
        mail_from_name = ${keep(input.mailFromName, 'mail_from_name', input.mailFromName ?? null)},
        mail_reply_to = ${keep(input.mailReplyTo, 'mail_reply_to', replyTo)}
      where id = ${ctx.principal.workspaceId}`;
    return readSettings(ctx);
  },
});

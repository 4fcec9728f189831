import { z } from 'zod';
import { idField, withReasons } from '../validation.ts';
import { requireAdmin } from '../auth/guards.ts';
import { invalid } from '../errors.ts';
import { defineOp } from '../operation.ts';
import { assertCategory } from './categories.ts';
import { memberSettingsSchema, type MemberSettings } from './categories-schema.ts';
import { canonicalTimezone } from './dates.ts';
import { unknownPerson } from '../resolve/people.ts';

export const memberSettingsFields = z.object({
  timezone: z.string().min(1).max(64).optional().describe('IANA timezone, e.g. Europe/Berlin: the wall clock of entries and the meaning of "today"'),
  weeklyTargetMinutes: z.int().min(0).max(10_080).nullable().optional().describe('Expected minutes of work per week (0-10080); null for none'),
  categoryId: z.uuid().nullable().optional().describe('Owner/Admin only: default consultant category; null for none'),
});

const memberSettingsInput = withReasons(memberSettingsFields.extend({ identityId: idField('The workspace user.') }), { identityId: 'bad_uuid' });

export type { MemberSettings } from './categories-schema.ts';

/**
 * PATCH /members/{identityId} (browser session): a workspace user's time settings.
 * Timezone and weekly target: the person themselves, or Owner/Admin. Default category: Owner/Admin.
 */
export const updateMemberSettings = defineOp({
  name: 'members.update',
  action: 'members.update',
  input: memberSettingsInput,
  output: memberSettingsSchema,
  run: async (ctx, body): Promise<MemberSettings> => {
    const p = ctx.principal;
    const { identityId } = body;
    if (identityId !== p.identityId) requireAdmin(p, "Only an owner or admin may change someone else's settings.");
    if (body.categoryId !== undefined) requireAdmin(p, 'Only an owner or admin may set the category.', { field: 'categoryId' });
    let timezone: string | undefined;
    if (body.timezone !== undefined) {
      timezone = canonicalTimezone(body.timezone) ?? undefined;
      if (!timezone) throw invalid('unknown_timezone', { field: 'timezone' }, 'timezone must be an IANA timezone such as Europe/Berlin.');
    }
    if (body.categoryId) await assertCategory(ctx, body.categoryId);
    const { sql } = ctx;
    const [row] = await sql<MemberSettings[]>`
      update memberships set
        timezone = coalesce(${timezone ?? null}::text, timezone),
        weekly_target_minutes = ${body.weeklyTargetMinutes === undefined ? sql`weekly_target_minutes` : sql`${body.weeklyTargetMinutes}::int`},
        category_id = ${body.categoryId === undefined ? sql`category_id` : sql`${body.categoryId}::uuid`}
      where workspace_id = ${p.workspaceId} and identity_id = ${identityId} and role not in ('client', 'client_elevated')
      returning identity_id as "identityId", timezone, weekly_target_minutes as "weeklyTargetMinutes", category_id as "categoryId"`;
    if (!row) throw unknownPerson('subject', { identityId }, 'No such workspace user.');
    return row;
  },
});

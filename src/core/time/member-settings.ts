import { z } from 'zod';
import { requireSession } from '../auth/guards.ts';
import { isAdminRole } from '../auth/principal.ts';
import type { Ctx } from '../ctx.ts';
import { forbidden, invalid, notFound } from '../errors.ts';
import { assertCategory } from './categories.ts';
import { requireStaff } from './common.ts';
import { canonicalTimezone } from './dates.ts';

export const memberSettingsInput = z.object({
  timezone: z.string().min(1).max(64).optional().describe('IANA timezone, e.g. Europe/Berlin: the wall clock of entries and the meaning of "today"'),
  weeklyTargetMinutes: z.int().min(0).max(10_080).nullable().optional().describe('Expected minutes of work per week (0-10080); null for none'),
  categoryId: z.uuid().nullable().optional().describe('Owner/Admin only: default consultant category; null for none'),
});

export interface MemberSettings {
  identityId: string;
  timezone: string;
  weeklyTargetMinutes: number | null;
  categoryId: string | null;
}

/**
 * PATCH /members/{identityId} (browser session): a workspace user's time settings.
 * Timezone and weekly target: the person themselves, or Owner/Admin. Default category: Owner/Admin.
 */
export async function updateMemberSettings(ctx: Ctx, identityId: string, input: unknown): Promise<MemberSettings> {
  const p = ctx.principal;
  requireStaff(p);
  requireSession(p);
  const body = memberSettingsInput.parse(input ?? {});
  const admin = isAdminRole(p.role);
  if (identityId !== p.identityId && !admin) throw forbidden('admin_only', undefined, "Only an owner or admin may change someone else's settings.");
  if (body.categoryId !== undefined && !admin) throw forbidden('admin_only', { field: 'categoryId' }, 'Only an owner or admin may set the category.');
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
  if (!row) throw notFound('unknown_person', { identityId }, 'No such workspace user.');
  return row;
}

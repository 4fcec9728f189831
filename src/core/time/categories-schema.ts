import { z } from 'zod';
import { describing, uuidOut } from '../response-schema.ts';

/** Consultant categories and a member's time settings, and their response schemas. */

/** A consultant category: the role a person bills as (e.g. "Senior developer"). */
export interface Category {
  id: string;
  name: string;
}

export interface MemberSettings {
  identityId: string;
  timezone: string;
  weeklyTargetMinutes: number | null;
  categoryId: string | null;
}

export const categorySchema = describing<Category>()(z.object({ id: uuidOut, name: z.string() }).meta({ id: 'Category' }));

export const categoryListSchema = describing<{ categories: Category[] }>()(z.object({ categories: z.array(categorySchema) }).meta({ id: 'CategoryList' }));

export const projectCategorySchema = describing<{ projectId: string; identityId: string; categoryId: string | null }>()(
  z
    .object({ projectId: uuidOut, identityId: uuidOut, categoryId: uuidOut.nullable().describe('Null: the member’s default category applies.') })
    .meta({ id: 'ProjectCategory' }),
);

export const memberSettingsSchema = describing<MemberSettings>()(
  z
    .object({
      identityId: uuidOut,
      timezone: z.string().describe('IANA time zone.'),
      weeklyTargetMinutes: z.number().int().nullable(),
      categoryId: uuidOut.nullable(),
    })
    .meta({ id: 'MemberSettings' }),
);

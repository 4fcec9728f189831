import { z } from 'zod';
import type { Ctx } from '../ctx.ts';
import { conflict, notFound } from '../errors.ts';
import { defineOp } from '../operation.ts';
import { readRates } from './list.ts';
import { rateFields, rateListSchema, type Rate, type RateFields } from './schema.ts';

export const replaceRatesInput = z.object({
  rates: z.array(rateFields).max(5000).describe("The workspace's whole rate table; rates not listed are removed."),
});

/**
 * PUT /rates (Owner/Admin by session or an admin-scoped token): replaces the workspace's rate
 * table with the one sent, in one transaction. Documents already made keep their figures: a run's
 * lines hold the rate they were billed at. Refused: a category, client or project not of this
 * workspace (404 `unknown_category` / `unknown_client` / `unknown_project`, naming the row), and
 * two rates for the same category, scope and currency from the same day (409 `duplicate_rate`:
 * which one applies would be a guess). Rates of one scope from different days do not overlap:
 * each applies from its date until the next one.
 */
export const replaceRates = defineOp({
  name: 'rates.replace',
  action: 'rates.replace',
  input: replaceRatesInput,
  output: rateListSchema,
  tx: true,
  audit: { action: 'rates.replace', target: () => null, detail: (i) => `${i.rates.length} rates` },
  run: async (ctx, { rates }): Promise<{ rates: Rate[] }> => {
    const { sql, principal: p } = ctx;
    // one writer of the table at a time: two PUTs never interleave their delete and insert
    await sql`select pg_advisory_xact_lock(hashtext('rates'), hashtext(${p.workspaceId}))`;
    await checkReferences(ctx, rates);
    const seen = new Map<string, number>();
    rates.forEach((r, i) => {
      const key = [r.categoryId, r.clientId ?? '', r.projectId ?? '', r.currency, r.effectiveFrom].join('|');
      const first = seen.get(key);
      if (first !== undefined) {
        throw conflict(
          'duplicate_rate',
          { field: `rates.${i}`, index: i, duplicateOf: first },
          `Rates ${first} and ${i} are for the same category, scope and currency from the same day.`,
        );
      }
      seen.set(key, i);
    });
    await sql`delete from rates where workspace_id = ${p.workspaceId}`;
    if (rates.length > 0) {
      await sql`
        insert into rates (workspace_id, category_id, client_id, project_id, currency, hourly_minor, effective_from)
        select ${p.workspaceId}, r.category_id, r.client_id, r.project_id, r.currency, r.hourly_minor, r.effective_from
        from unnest(${rates.map((r) => r.categoryId)}::uuid[], ${rates.map((r) => r.clientId ?? null)}::uuid[], ${rates.map((r) => r.projectId ?? null)}::uuid[],
                    ${rates.map((r) => r.currency)}::text[], ${rates.map((r) => r.hourlyRateMinor)}::int[], ${rates.map((r) => r.effectiveFrom)}::date[])
             as r(category_id, client_id, project_id, currency, hourly_minor, effective_from)`;
    }
    return { rates: await readRates(sql, p.workspaceId) };
  },
});

/** Every category, client and project named must be this workspace's: else 404 naming the first row that is not. */
async function checkReferences(ctx: Ctx, rates: RateFields[]): Promise<void> {
  const { sql, principal: p } = ctx;
  const kinds = [
    { field: 'categoryId', table: sql`consultant_categories`, reason: 'unknown_category', what: 'consultant category' },
    { field: 'clientId', table: sql`clients`, reason: 'unknown_client', what: 'client' },
    { field: 'projectId', table: sql`projects`, reason: 'unknown_project', what: 'project' },
  ] as const;
  for (const k of kinds) {
    const ids = [...new Set(rates.map((r) => r[k.field]).filter((id): id is string => !!id))];
    if (ids.length === 0) continue;
    const found = await sql<{ id: string }[]>`select id from ${k.table} where workspace_id = ${p.workspaceId} and id = any(${ids}::uuid[])`;
    const known = new Set(found.map((r) => r.id));
    const i = rates.findIndex((r) => r[k.field] && !known.has(r[k.field]!));
    if (i >= 0) throw notFound(k.reason, { field: `rates.${i}.${k.field}`, index: i }, `Rate ${i} names no ${k.what} of this workspace.`);
  }
}

import type { Ctx } from '../ctx.ts';
import { invalid } from '../errors.ts';
import { isUuid, unknownName } from './common.ts';

/**
 * A billing period by id or by the month it starts in (`YYYY-MM`, how people name a period) ->
 * period id. Ids pass through (the operation checks them). Anything else is 400 `validation`; a
 * month no period starts in is 400 `unknown_period` listing the workspace's periods.
 */
export async function resolvePeriodId(ctx: Ctx, value: string, field: string): Promise<string> {
  if (isUuid(value)) return value.toLowerCase();
  const month = value.trim();
  if (!/^\d{4}-\d{2}$/.test(month)) throw invalid('validation', { field, value }, `${field}: a period is named by the month it starts in, YYYY-MM.`);
  const { sql, principal: p } = ctx;
  const periods = await sql<{ id: string; month: string; periodStart: string }[]>`
    select id, to_char(period_start, 'YYYY-MM') as month, period_start::text as "periodStart"
    from periods where workspace_id = ${p.workspaceId} order by period_start desc`;
  const hit = periods.find((row) => row.month === month);
  if (hit) return hit.id;
  throw unknownName(
    'unknown_period',
    field,
    value,
    periods.map(({ id, periodStart }) => ({ id, periodStart })),
  );
}

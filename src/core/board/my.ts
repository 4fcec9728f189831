import { z } from 'zod';
import { onCachedPlan } from '../../db/connect.ts';
import type { Ctx } from '../ctx.ts';
import { jsonText, type JsonText } from '../json-text.ts';
import { byteRows, textOf } from '../../db/raw.ts';
import { defineOp } from '../operation.ts';
import type { Fragment } from '../tickets/summary.ts';
import { pageRowsSql, summaryListsSql, todaySql } from './page.ts';
import { remembered } from '../reads/remembered.ts';
import { myWorkSchema, type MyWork } from './schema.ts';

/** Each list of GET /my holds at most this many tickets. */
export const MY_LIST_LIMIT = 50;

/** Days ahead (today included) that count as "due soon": the same window as GET /tickets?due=week. */
export const DUE_SOON_DAYS = 7;

/** REST shows every list whole (up to MY_LIST_LIMIT); an assistant asks for shorter lists. */
export const myWorkInput = z.object({
  limit: z.int().min(1).max(MY_LIST_LIMIT).optional().describe(`Tickets per list, 1 to ${MY_LIST_LIMIT} (default ${MY_LIST_LIMIT}).`),
});

/**
 * GET /my: the caller's own lists (for an agent token, the agent's), archived tickets left out,
 * visibility applied to every list, each capped at MY_LIST_LIMIT, all four in one statement
 * (the stored summaries of the union of the four pages read in one join), run on
 * its cached plan (db/connect.ts `onCachedPlan`: planned once per connection, not per call).
 * - assigned: open tickets assigned to the caller; priority, then due date (none last), then activity
 * - reported: tickets the caller started (reporter), open or closed; most recent activity first
 * - watching: tickets the caller is a viewer on; most recent activity first
 * - dueSoon: open visible tickets overdue or due within DUE_SOON_DAYS days (the caller's today
 *   included, in their timezone); earliest due date first, then priority, then activity
 */
function myListsSql(ctx: Ctx, input: z.output<typeof myWorkInput>): Fragment {
  const { sql, principal: p } = ctx;
  const me = p.identityId;
  const limit = input.limit ?? MY_LIST_LIMIT;
  const recent: Fragment = sql`t.updated_at desc, t.id desc`;
  // open tickets: the state's category as kept on the ticket (sql/109), each list one ordered index range
  const assigned = pageRowsSql(ctx, {
    where: sql`t.assignee_id = ${me}::uuid and not t.archived and t.state_open`,
    order: sql`t.priority_position, t.due_date, t.updated_at desc, t.id desc`,
    limit,
  });
  const reported = pageRowsSql(ctx, { where: sql`t.reporter_id = ${me}::uuid and not t.archived`, order: recent, limit });
  const watching = pageRowsSql(ctx, {
    where: sql`t.id in (select v.ticket_id from ticket_viewers v where v.identity_id = ${me}::uuid) and not t.archived`,
    order: recent,
    limit,
  });
  const dueSoon = pageRowsSql(ctx, {
    where: sql`t.workspace_id = ${p.workspaceId} and not t.archived and t.state_open and t.due_date is not null
               and t.due_date < ${todaySql(ctx)} + ${DUE_SOON_DAYS}::int`,
    order: sql`t.due_date, t.priority_position, t.updated_at desc, t.id desc`,
    limit,
  });
  return summaryListsSql(ctx, [
    ['assigned', assigned],
    ['reported', reported],
    ['watching', watching],
    ['dueSoon', dueSoon],
  ]);
}

export const getMyWork = defineOp({
  name: 'mywork.read',
  action: 'mywork.read',
  input: myWorkInput,
  output: myWorkSchema,
  run: async (ctx, input): Promise<MyWork> => {
    const [row] = await onCachedPlan(
      ctx.sql,
      (sql) => sql<[MyWork]>`
        select x.assigned::json as assigned, x.reported::json as reported, x.watching::json as watching, x."dueSoon"::json as "dueSoon"
        from (${myListsSql(ctx, input)}) x`,
    );
    return row;
  },
});

/**
 * GET /my as the REST door sends it: the same lists as `getMyWork`, as the JSON text PostgreSQL
 * wrote (core/json-text.ts). Unchanged lists are answered from memory (remembered.ts), keyed also
 * by the caller's today, on which dueSoon depends.
 */
export const getMyWorkJson = defineOp({
  name: 'mywork.read.json',
  action: 'mywork.read',
  input: myWorkInput,
  output: myWorkSchema,
  run: async (ctx, input): Promise<JsonText> => {
    const text = await remembered(
      ctx,
      'my',
      input,
      async (markSql) => {
        const [row] = await onCachedPlan(ctx.sql, (sql) =>
          byteRows<'json' | 'mark'>(sql`
            select '{"assigned":' || x.assigned || ',"reported":' || x.reported || ',"watching":' || x.watching || ',"dueSoon":' || x."dueSoon" || '}' as json,
                   ${markSql ?? sql`null::text`} as mark
            from (${myListsSql(ctx, input)}) x`),
        );
        // a copy: the slice would keep the whole message it arrived in alive in the remembered answers
        return { body: Buffer.from(row!.json!), mark: textOf(row!.mark) };
      },
      todaySql(ctx),
    );
    return jsonText(text);
  },
});

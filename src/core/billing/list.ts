import { z } from 'zod';
import { notFound } from '../errors.ts';
import { defineOp } from '../operation.ts';
import { badCursor, decodeCursor, encodeCursor, isMicrosTimestamp } from '../tickets/cursor.ts';
import { idField, UUID_PATTERN, withReasons } from '../validation.ts';
import { presentRun, type BillingRun } from './present.ts';
import { billingRunListSchema, billingRunSchema, runEntryPageSchema, type RunEntry } from './run-schema.ts';

export type { RunEntry } from './run-schema.ts';

const limit = (max: number, byDefault: number) =>
  z.coerce.number().int().min(1).max(max).default(byDefault).describe(`Page size, 1-${max} (default ${byDefault}).`);
const cursor = z.string().max(200).optional().describe('nextCursor of the previous page.');

const runId = idField('The billing run (uuid).');

export const listRunsInput = z.object({ cursor, limit: limit(100, 20) });
/** The query of GET /billing/runs/{id}/entries. */
export const listRunEntriesQuery = z.object({ cursor, limit: limit(500, 100) });
const listRunEntriesInput = withReasons(listRunEntriesQuery.extend({ id: runId }), { id: 'bad_uuid' });
const getRunInput = withReasons(z.object({ id: runId }), { id: 'bad_uuid' });

/** A cursor's parts under `kind`, each checked against its pattern: anything else is 400 `bad_cursor`, never a database error. */
function decodeChecked(raw: string | undefined, kind: string, checks: ((part: string) => boolean)[]): string[] | null {
  if (raw === undefined) return null;
  const parts = decodeCursor(raw, kind, checks.length);
  if (parts.some((part, i) => !checks[i]!(part))) throw badCursor();
  return parts;
}

const isUuid = (s: string) => UUID_PATTERN.test(s);

/** GET /billing/runs: the workspace's runs, newest first, keyset-paged. */
export const listRuns = defineOp({
  name: 'billing.runs.list',
  action: 'billing.runs.list',
  input: listRunsInput,
  output: billingRunListSchema,
  run: async (ctx, q): Promise<{ items: BillingRun[]; nextCursor: string | null }> => {
    const after = decodeChecked(q.cursor, 'runs', [isMicrosTimestamp, isUuid]);
    const { sql, principal: p } = ctx;
    const ids = await sql<{ id: string; createdAt: string }[]>`
      select id, to_char(created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US') as "createdAt" from billing_runs
      where workspace_id = ${p.workspaceId}
        ${after ? sql`and (created_at, id) < (${after[0]!}::text::timestamp at time zone 'UTC', ${after[1]!}::uuid)` : sql``}
      order by created_at desc, id desc limit ${q.limit + 1}`;
    const page = ids.slice(0, q.limit);
    const items = await Promise.all(page.map((r) => presentRun(sql, p.workspaceId, r.id)));
    const last = page.at(-1);
    return { items, nextCursor: ids.length > q.limit && last ? encodeCursor('runs', [last.createdAt, last.id]) : null };
  },
});

/** GET /billing/runs/{id}: one run with per-client totals and its document ids. */
export const getRun = defineOp({
  name: 'billing.runs.read',
  action: 'billing.runs.read',
  input: getRunInput,
  output: billingRunSchema,
  run: (ctx, { id }): Promise<BillingRun> => presentRun(ctx.sql, ctx.principal.workspaceId, id),
});

/** GET /billing/runs/{id}/entries: the exact entry set, by entry id, keyset-paged. */
export const listRunEntries = defineOp({
  name: 'billing.runs.entries',
  action: 'billing.runs.read',
  input: listRunEntriesInput,
  output: runEntryPageSchema,
  run: async (ctx, q): Promise<{ items: RunEntry[]; nextCursor: string | null }> => {
    const runId = q.id;
    const afterId = decodeChecked(q.cursor, 'run-entries', [isUuid])?.[0] ?? null;
    const { sql, principal: p } = ctx;
    const [run] = await sql`select 1 from billing_runs where id = ${runId} and workspace_id = ${p.workspaceId}`;
    if (!run) throw notFound('unknown_run', undefined, 'No such billing run.');
    const rows = await sql<RunEntry[]>`
      select l.entry_id as "entryId", l.ticket_id as "ticketId", pr.key || '-' || t.number as "ticketRef", e.user_id as "userId",
             i.name as "userName", l.client_id as "clientId", l.project_id as "projectId", e.spent_on::text as "spentOn", l.minutes,
             l.policy, l.bank_id as "bankId", e.corrects_entry_id as "correctsEntryId", l.active as live
      from billing_run_entries l
      join time_entries e on e.id = l.entry_id
      join tickets t on t.id = l.ticket_id
      join projects pr on pr.id = l.project_id
      join identities i on i.id = e.user_id
      where l.run_id = ${runId} ${afterId ? sql`and l.entry_id > ${afterId}::uuid` : sql``}
      order by l.entry_id limit ${q.limit + 1}`;
    const items = rows.slice(0, q.limit);
    return { items, nextCursor: rows.length > q.limit ? encodeCursor('run-entries', [items.at(-1)!.entryId]) : null };
  },
});

import type { Db } from '../../db/connect.ts';
import type { Ctx } from '../ctx.ts';
import { notFound } from '../errors.ts';
import { isoSql } from '../tickets/summary.ts';
import type { Client } from './schema.ts';

type Fragment = ReturnType<Db>;

/** The columns of a Client, from clients row `c`. */
export function clientColumns(sql: Db): Fragment {
  return sql`c.id, c.name, c.code, c.locale, c.timesheet_layout as "timesheetLayout", c.billing_policy as "billingPolicy",
             c.billing_mode as "billingMode", c.currency, c.tax_rate_bp as "taxRateBasisPoints", c.tax_label as "taxLabel",
             c.tax_note as "taxNote", c.payment_terms_days as "paymentTermsDays",
             c.billing_address as "billingAddress", c.tax_id as "taxId", c.timesheet_lines as "timesheetLines", c.delivery, ${isoSql(sql, sql`c.archived_at`)} as "archivedAt", ${isoSql(sql, sql`c.created_at`)} as "createdAt"`;
}

/**
 * The client `id` of the caller's workspace, or 404 `unknown_client` (another workspace's is
 * unknown too). `lock` holds its row for the rest of the transaction (a PATCH, a recipients PUT).
 */
export async function loadClient(ctx: Ctx, id: string, opts: { lock?: boolean; field?: string } = {}): Promise<Client> {
  const { sql, principal: p } = ctx;
  const [row] = await sql<Client[]>`
    select ${clientColumns(sql)} from clients c where c.id = ${id} and c.workspace_id = ${p.workspaceId}
    ${opts.lock ? sql`for no key update` : sql``}`;
  if (!row) throw notFound('unknown_client', opts.field ? { field: opts.field } : undefined, 'No such client.');
  return row;
}

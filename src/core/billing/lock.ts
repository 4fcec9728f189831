import type { Db } from '../../db/connect.ts';

/** Serialises starting and allocating billing runs within a workspace (transaction-scoped). */
export async function lockBilling(sql: Db, workspaceId: string): Promise<void> {
  await sql`select pg_advisory_xact_lock(7262011, hashtext(${workspaceId}::text))`;
}

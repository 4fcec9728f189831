import type { Db } from '../../db/connect.ts';

/**
 * Takes the next number in a project (or the workspace Inbox when projectId is null). The
 * counter row is locked until the statement's transaction ends: run alone (outside a
 * transaction), that is this one statement, so concurrent creators of one project do not queue
 * behind each other's whole transaction. A number taken by a transaction that then fails is not
 * given back: ticket numbers may have gaps (only document numbers are gap-free).
 */
export async function takeNumber(sql: Db, workspaceId: string, projectId: string | null): Promise<number> {
  const [row] = projectId
    ? await sql<{ n: number }[]>`update projects set next_number = next_number + 1 where id = ${projectId} returning next_number as n`
    : await sql<{ n: number }[]>`update workspaces set inbox_next_number = inbox_next_number + 1 where id = ${workspaceId} returning inbox_next_number as n`;
  return row!.n;
}

/** Records that `ticketId` holds `number` in the project, so every number a ticket ever had keeps resolving. */
export async function recordNumber(sql: Db, workspaceId: string, projectId: string | null, number: number, ticketId: string): Promise<void> {
  await sql`insert into ticket_refs (workspace_id, project_id, number, ticket_id) values (${workspaceId}, ${projectId}, ${number}, ${ticketId})`;
}

/** Takes the next number and records it, inside the caller's transaction (moves, mail intake, the demo). */
export async function assignNumber(sql: Db, workspaceId: string, projectId: string | null, ticketId: string): Promise<number> {
  const n = await takeNumber(sql, workspaceId, projectId);
  await recordNumber(sql, workspaceId, projectId, n, ticketId);
  return n;
}

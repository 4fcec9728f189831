import type { Db } from '../../db/connect.ts';

/**
 * Takes the next number in a project (or the workspace Inbox when projectId is null) and
 * records it in ticket_refs, so every number a ticket ever had keeps resolving.
 * The counter row lock serialises concurrent creators of the same project.
 */
export async function assignNumber(sql: Db, workspaceId: string, projectId: string | null, ticketId: string): Promise<number> {
  const [row] = projectId
    ? await sql<{ n: number }[]>`update projects set next_number = next_number + 1 where id = ${projectId} returning next_number as n`
    : await sql<{ n: number }[]>`update workspaces set inbox_next_number = inbox_next_number + 1 where id = ${workspaceId} returning inbox_next_number as n`;
  const n = row!.n;
  await sql`insert into ticket_refs (workspace_id, project_id, number, ticket_id) values (${workspaceId}, ${projectId}, ${n}, ${ticketId})`;
  return n;
}

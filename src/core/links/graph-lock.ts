import type { Db } from '../../db/connect.ts';

/** Advisory-lock classes: one per graph, so link writes and parent writes do not wait on each other. */
const GRAPH_LOCK_CLASS = { links: 72_001, parents: 72_002 } as const;

/**
 * Serialises writes to one graph of one workspace until the transaction ends. Cycle and depth
 * checks read the whole graph and then insert an edge; without this, two opposite edges written
 * at the same time could each pass their check and together form a cycle. Take it first in the
 * transaction, before any row lock, so every graph writer waits in the same order.
 */
export async function lockTicketGraph(sql: Db, workspaceId: string, graph: keyof typeof GRAPH_LOCK_CLASS): Promise<void> {
  await sql`select pg_advisory_xact_lock(${GRAPH_LOCK_CLASS[graph]}::integer, hashtext(${workspaceId}::text))`;
}

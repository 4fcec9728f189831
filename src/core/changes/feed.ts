import { z } from 'zod';
import { visibleBeforeChange, visibleEvent } from '../access/events.ts';
import { visibleTicket } from '../access/visible.ts';
import { defineOp } from '../operation.ts';
import { changePageSchema, type ChangePage } from './schema.ts';

export const changesQuery = z.object({
  after: z.coerce.number().int().min(0).max(Number.MAX_SAFE_INTEGER).default(0).describe('The nextAfter of the previous call; 0 to start from the beginning'),
  limit: z.coerce.number().int().min(1).max(500).default(100).describe('At most this many changes (1-500, default 100)'),
});

/** When a page is full, come back at once; when caught up, in a few seconds. */
export const IDLE_POLL_SECONDS = 5;

/**
 * GET /changes: every change to a ticket the caller can see now that its timeline shows (the
 * same `visibleEvent` rule as the ticket page), in commit order, plus one entry at the moment a
 * ticket left their sight: `deleted` when it was deleted, `gone` otherwise (moved out, viewer
 * removed, archived). That entry names the ticket as it was just before (its human id then).
 * Visibility is evaluated in SQL twice: against the ticket now, and against the ticket's
 * visibility columns as they were just before the change.
 */
export const listChanges = defineOp({
  name: 'changes.list',
  action: 'changes.list',
  input: changesQuery,
  output: changePageSchema,
  run: async (ctx, q): Promise<ChangePage> => {
    const { sql, principal: p } = ctx;
    // A caught-up poller (the common case) is answered from memory.
    if (ctx.caches?.changeMarks.caughtUp(p.workspaceId, q.after)) return { changes: [], nextAfter: q.after, pollAfterSeconds: IDLE_POLL_SECONDS };
    // One round trip: the page and the workspace's high-water mark, from the same snapshot.
    const [row] = await sql<[{ mark: string; changes: { seq: string; ticketId: string; humanId: string; kind: string; at: string }[] }]>`
    with page as (
      select c.seq, c.ticket_id as "ticketId", c.at,
             case when t.id is not null then coalesce(pr.key, 'INBOX') || '-' || t.number else c.human_id end as "humanId",
             case when t.id is not null then c.kind when c.kind = 'deleted' then 'deleted' else 'gone' end as kind
      from ticket_changes c
      left join tickets t on t.id = c.ticket_id and not t.archived and ${visibleTicket(sql, p, 't')}
      left join projects pr on pr.id = t.project_id
      left join ticket_events e on e.id = c.event_id and t.id is not null
      left join lateral (
        select n.ticket_id, n.workspace_id, n.prior_project_id, n.prior_reporter_id, n.prior_assignee_id, n.prior_viewer_ids, n.prior_archived
        from ticket_changes n where n.ticket_id = c.ticket_id and n.seq > c.seq order by n.seq limit 1
      ) nx on t.id is null
      where c.workspace_id = ${p.workspaceId} and c.seq > ${q.after}
        -- visible now: the changes its timeline shows; otherwise only the change after which the ticket left sight
        and case when t.id is not null then e.id is not null and ${visibleEvent(sql, p, 'e')}
                 else ${visibleBeforeChange(sql, p, 'c')} and (nx.ticket_id is null or not ${visibleBeforeChange(sql, p, 'nx')}) end
      order by c.seq
      limit ${q.limit}
    )
    select (select coalesce(max(seq), 0) from ticket_changes where workspace_id = ${p.workspaceId} and seq is not null) as mark,
           coalesce((select json_agg(page order by page.seq) from page), '[]') as changes`;
    ctx.caches?.changeMarks.observe(p.workspaceId, Number(row.mark));
    const changes = row.changes.map((c) => ({ seq: Number(c.seq), ticketId: c.ticketId, humanId: c.humanId, kind: c.kind, at: new Date(c.at).toISOString() }));
    const full = changes.length === q.limit;
    // Caught up: skip past invisible changes too, so the next poll starts at the high-water mark.
    const nextAfter = Math.max(q.after, full ? changes[changes.length - 1]!.seq : Number(row.mark));
    return { changes, nextAfter, pollAfterSeconds: full ? 0 : IDLE_POLL_SECONDS };
  },
});

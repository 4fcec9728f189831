-- A ticket's updated_at moved at commit, for writes that ask for it (issue 25, "Load").
--
-- recordEvents (src/core/tickets/events.ts) moves the ticket's updated_at with an UPDATE, which
-- locks the ticket's row until the transaction ends. Logging time on a ticket took that lock in
-- its last statement and held it across the round trip to COMMIT: everyone logging on one ticket
-- (an agency's "Meetings" ticket; the bench's 200 clients) queued behind each other's commit,
-- 109 ms mean per entry under load. Time writes now note the ticket here instead, and a deferred
-- constraint trigger moves updated_at while the commit runs: the row is locked only then.
--
-- Lock order: the note is written before the events (whose change rows take the per-workspace
-- advisory lock at commit, sql/040), so at commit the ticket's row comes first and the advisory
-- lock second, the order every ticket update already takes (row in its statement, advisory at
-- commit): no deadlock between them. Notes of one transaction are written in ticket id order.
create unlogged table ticket_touch_pending (
  xid xid8 not null default pg_current_xact_id(),
  ticket_id uuid not null,
  at timestamptz not null,
  primary key (xid, ticket_id)
);

create function ticket_touch_settle() returns trigger language plpgsql as $$
begin
  -- whole milliseconds, as recordEvents: each change moves updatedAt by at least one
  update tickets t set updated_at = greatest(p.at, t.updated_at + interval '1 millisecond')
  from ticket_touch_pending p
  where p.xid = new.xid and p.ticket_id = new.ticket_id and t.id = p.ticket_id;
  delete from ticket_touch_pending where xid = new.xid and ticket_id = new.ticket_id;
  return null;
end $$;

create constraint trigger ticket_touch_pending_settle after insert on ticket_touch_pending
  deferrable initially deferred for each row execute function ticket_touch_settle();

-- Ticket marks (issue 25, "API overhead": the ticket page remembered as the list and the board are).
--
-- A ticket page reads, besides what a board reads (sql/098: the workspace's read mark follows
-- those tables), what only that ticket's page shows: its events, time entries, attachments, links
-- and codehost links. Noting the workspace for them would drop every remembered board, list and
-- "my work" of the workspace whenever anyone logs time; they number a mark of the ticket instead,
-- which only that ticket's page reads beside the workspace's and the global marks
-- (src/core/tickets/read.ts).
--
-- Same scheme as sql/098: statement-level triggers note the tickets a statement touched in
-- ticket_mark_pending (one row per transaction and ticket), and a deferred constraint trigger
-- numbers them at commit, in ticket order, in one statement, so the row locks on ticket_marks are
-- held only while the commit runs and two commits take them in one order. No advisory lock: no
-- other lock is taken beside these (a billing run bills the entries of thousands of tickets in one
-- transaction; an advisory lock per ticket would fill PostgreSQL's shared lock table).
--
-- A ticket's row outlives it (no foreign key: a ticket deleted by the transaction that also
-- deleted its entries is numbered at that commit); a row is a uuid and a number.
create sequence ticket_mark_seq;

create table ticket_marks (
  ticket_id uuid primary key,
  n bigint not null
);

create unlogged table ticket_mark_pending (
  xid xid8 not null default pg_current_xact_id(),
  ticket_id uuid not null,
  primary key (xid, ticket_id)
);

-- One row per transaction that noted a ticket: its deferred trigger numbers them all at commit,
-- once (a trigger on the pending rows themselves would fire once per ticket, and a billing run
-- notes thousands).
create unlogged table ticket_mark_commits (
  xid xid8 primary key default pg_current_xact_id()
);

create function ticket_mark_number() returns trigger language plpgsql as $$
begin
  insert into ticket_marks as m (ticket_id, n)
  select r.ticket_id, nextval('ticket_mark_seq') from ticket_mark_pending r where r.xid = new.xid order by r.ticket_id
  on conflict (ticket_id) do update set n = excluded.n;
  delete from ticket_mark_pending where xid = new.xid;
  delete from ticket_mark_commits where xid = new.xid;
  return null;
end $$;

create constraint trigger ticket_mark_commit_number after insert on ticket_mark_commits
  deferrable initially deferred for each row execute function ticket_mark_number();

-- Notes the tickets of the rows a statement wrote: `ticket_id`, or both ends of a link. A
-- statement that wrote no row (a cascade that found nothing) notes nothing.
create function ticket_mark_follow() returns trigger language plpgsql as $$
declare
  noted bigint := 0;
  n bigint;
begin
  if tg_op in ('INSERT', 'UPDATE') then
    if tg_table_name = 'ticket_links' then
      insert into ticket_mark_pending (ticket_id)
      select k from new_rows r cross join lateral (values (r.source_id), (r.target_id)) v(k) order by 1 on conflict do nothing;
    else
      insert into ticket_mark_pending (ticket_id)
      select distinct r.ticket_id from new_rows r where r.ticket_id is not null order by 1 on conflict do nothing;
    end if;
    get diagnostics n = row_count;
    noted := noted + n;
  end if;
  if tg_op in ('DELETE', 'UPDATE') then
    if tg_table_name = 'ticket_links' then
      insert into ticket_mark_pending (ticket_id)
      select k from old_rows r cross join lateral (values (r.source_id), (r.target_id)) v(k) order by 1 on conflict do nothing;
    else
      insert into ticket_mark_pending (ticket_id)
      select distinct r.ticket_id from old_rows r where r.ticket_id is not null order by 1 on conflict do nothing;
    end if;
    get diagnostics n = row_count;
    noted := noted + n;
  end if;
  if noted > 0 then
    insert into ticket_mark_commits default values on conflict do nothing;
  end if;
  return null;
end $$;

-- A truncate changes every page: it numbers the global read mark, which every page reads too.
do $$
declare
  t text;
begin
  foreach t in array array['ticket_events', 'time_entries', 'attachments', 'ticket_links', 'codehost_links'] loop
    execute format('create trigger ticket_mark_insert after insert on %I referencing new table as new_rows for each statement execute function ticket_mark_follow()', t);
    execute format('create trigger ticket_mark_update after update on %I referencing old table as old_rows new table as new_rows for each statement execute function ticket_mark_follow()', t);
    execute format('create trigger ticket_mark_delete after delete on %I referencing old table as old_rows for each statement execute function ticket_mark_follow()', t);
    execute format('create trigger read_mark_truncate after truncate on %I for each statement execute function read_mark_follow(%L)', t, 'global');
  end loop;
end $$;

-- How a ticket reference finds its ticket (a project's key, a moved ticket's old number): rare
-- changes, on the workspace's mark as everything else the page shares with other reads.
do $$
declare
  t text;
begin
  foreach t in array array['project_prefixes', 'ticket_refs'] loop
    execute format('create trigger read_mark_insert after insert on %I referencing new table as new_rows for each statement execute function read_mark_follow(%L)', t, 'workspace');
    execute format('create trigger read_mark_update after update on %I referencing old table as old_rows new table as new_rows for each statement execute function read_mark_follow(%L)', t, 'workspace');
    execute format('create trigger read_mark_delete after delete on %I referencing old table as old_rows for each statement execute function read_mark_follow(%L)', t, 'workspace');
    execute format('create trigger read_mark_truncate after truncate on %I for each statement execute function read_mark_follow(%L)', t, 'global');
  end loop;
end $$;

-- Each ticket's labels kept as the JSON its summary shows (issue 25, "Board").
--
-- Every TicketSummary carries `labels` (id and name, by name), and every list, board and "my work"
-- statement built it per ticket with a correlated aggregate: a sort and a join of ticket_labels
-- with labels for each of the 50 to 400 tickets of an answer, a fifth of the board's statement.
-- The array changes only when a ticket's labels or a label's name change, so it is kept, by the
-- triggers below, in the transaction that changes them: a ticket without labels has no row (its
-- summary shows `[]`). `compute_ticket_label_sets` is the one definition of the array; the
-- migration and bench/seed.ts (which labels tickets with triggers off) call it directly.
--
-- Two transactions changing one ticket's labels at once must not leave the array of whichever
-- computed last from a view without the other's rows: the triggers first take the tickets' row
-- locks (`for no key update`, in id order, as PATCH takes its ticket's before anything), so the
-- second waits for the first to commit and then computes, in a statement of its own, from what
-- both wrote.

create table ticket_label_sets (
  ticket_id uuid primary key references tickets on delete cascade,
  labels json not null
);

create function compute_ticket_label_sets(ids uuid[]) returns void language sql as $$
  delete from ticket_label_sets s
  where s.ticket_id = any(ids) and not exists (select 1 from ticket_labels tl where tl.ticket_id = s.ticket_id);
  insert into ticket_label_sets (ticket_id, labels)
  select tl.ticket_id, json_agg(json_build_object('id', l.id, 'name', l.name) order by lower(l.name), l.id)
  from ticket_labels tl join labels l on l.id = tl.label_id
  where tl.ticket_id = any(ids) and exists (select 1 from tickets t where t.id = tl.ticket_id)
  group by tl.ticket_id
  on conflict (ticket_id) do update set labels = excluded.labels;
$$;

-- Locks the tickets, then computes their arrays from what is committed by then and this transaction's own rows.
create function refresh_ticket_label_sets(ids uuid[]) returns void language plpgsql as $$
begin
  perform 1 from tickets where id = any(ids) order by id for no key update;
  perform compute_ticket_label_sets(ids);
end $$;

create function ticket_labels_follow() returns trigger language plpgsql as $$
begin
  if tg_op = 'INSERT' then
    perform refresh_ticket_label_sets(array(select distinct ticket_id from new_rows));
  else
    perform refresh_ticket_label_sets(array(select distinct ticket_id from old_rows));
  end if;
  return null;
end $$;
create trigger ticket_label_sets_insert after insert on ticket_labels
  referencing new table as new_rows for each statement execute function ticket_labels_follow();
create trigger ticket_label_sets_delete after delete on ticket_labels
  referencing old table as old_rows for each statement execute function ticket_labels_follow();

create function ticket_labels_truncated() returns trigger language plpgsql as $$
begin
  delete from ticket_label_sets;
  return null;
end $$;
create trigger ticket_label_sets_truncate after truncate on ticket_labels
  for each statement execute function ticket_labels_truncated();

create function labels_follow() returns trigger language plpgsql as $$
begin
  perform refresh_ticket_label_sets(array(
    select distinct tl.ticket_id from ticket_labels tl join new_rows n on n.id = tl.label_id join old_rows o on o.id = n.id
    where n.name is distinct from o.name));
  return null;
end $$;
create trigger ticket_label_sets_rename after update on labels
  referencing old table as old_rows new table as new_rows for each statement execute function labels_follow();

select compute_ticket_label_sets(array(select distinct ticket_id from ticket_labels));

-- Summaries read it, so it moves the workspace's read mark as every table they read does (sql/098):
-- its rows change with ticket_labels or labels rows, which move it already; this keeps the rule
-- whole should anything else ever write it.
create trigger read_mark_insert after insert on ticket_label_sets
  referencing new table as new_rows for each statement execute function read_mark_follow('ticket');
create trigger read_mark_update after update on ticket_label_sets
  referencing old table as old_rows new table as new_rows for each statement execute function read_mark_follow('ticket');
create trigger read_mark_delete after delete on ticket_label_sets
  referencing old table as old_rows for each statement execute function read_mark_follow('ticket');
create trigger read_mark_truncate after truncate on ticket_label_sets
  for each statement execute function read_mark_follow('global');

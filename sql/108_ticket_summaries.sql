-- Each ticket's TicketSummary kept as the JSON text every list, board and "my work" sends (issue 25, "Board").
--
-- Written per read from a typed row (sql/107), a summary cost about 25 us of the statement: PostgreSQL
-- looks up the output of each of its ~30 attributes, nested rows included, on every row (measured on
-- 150 tickets: 4.3 ms for the typed rows against 0.3 ms for text already written, .prof/concat.mts).
-- The board writes 400 of them, "my work" up to 200, for every read after any change in the workspace.
-- What a summary shows changes only when the ticket or one of the rows it names changes, so it is
-- written then, by the triggers below, in the transaction of the change:
--   head  the summary's object from `id` to `estimateMinutes`, without its closing brace;
--   tail  `createdAt` and `updatedAt` and the closing brace.
-- The two keys between them depend on who reads (`parentId` only when the parent is visible to the
-- reader, `commentCount` counting the comments the reader may see): src/core/tickets/summary.ts
-- writes them per read between head and tail. `compute_ticket_summaries` is the one definition of the
-- stored text; the migration, bench/seed.ts and the tests call it directly.
--
-- As for the labels arrays (sql/106), two transactions must not leave a summary written from a view
-- without the other's change: the triggers of the named rows first lock the tickets (`for no key
-- update`, in id order), so a concurrent change of the same ticket commits first and is read by a
-- statement of its own; a change of the ticket itself holds that lock already.

-- The summary's keys up to `estimateMinutes`, the nested objects as sql/107's typed rows (sql/107's
-- whole-summary type, written per read until now, goes). A key added to TicketSummary goes here, or
-- between head and tail in summaryText, or in the tail, and in compute_ticket_summaries.
drop type json_ticket_summary;

create type json_ticket_summary_head as (
  id uuid,
  "humanId" text,
  title text,
  kind json_named_ref,
  state json_state,
  priority json_priority,
  project json_named_ref,
  queue text,
  assignee json_person,
  reporter json_person,
  "billingClient" json_client,
  labels json,
  "dueDate" date,
  "startDate" date,
  "estimateMinutes" integer
);

create table ticket_summaries (
  ticket_id uuid primary key references tickets on delete cascade,
  head text not null,
  tail text not null
);

-- The stored head and tail of tickets `ids`, written only where they differ. The person names are
-- person_name's (sql/070): the workspace's mail-learned name, else the identity's.
-- On its generic plan, kept for the session: planned per call (a SQL function's statement is; so
-- is a PL/pgSQL one whose custom plans look cheaper), the insert's fifteen joins added 7 ms to every
-- ticket write (measured with EXPLAIN ANALYZE of a ticket touch: the trigger 7.4 ms, 0.1 ms now).
create function compute_ticket_summaries(ids uuid[]) returns void language plpgsql
set plan_cache_mode = force_generic_plan as $$
begin
  insert into ticket_summaries (ticket_id, head, tail)
  select t.id,
         left(to_json(row(
           t.id,
           coalesce(p.key, 'INBOX') || '-' || t.number,
           t.title,
           case when k.id is null then null else row(k.id, k.key, k.name)::json_named_ref end,
           case when s.id is null then null else row(s.id, s.key, s.name, s.category, s.position)::json_state end,
           case when pr.id is null then null else row(pr.id, pr.key, pr.name, pr.position)::json_priority end,
           case when p.id is null then null else row(p.id, p.key, p.name)::json_named_ref end,
           case when t.project_id is null then 'inbox' end,
           case when a.id is null then null else row(a.id, coalesce(an.name, a.name), ac.name)::json_person end,
           case when r.id is null then null else row(r.id, coalesce(rn.name, r.name), rc.name)::json_person end,
           case when b.id is null then null else row(b.id, b.name)::json_client end,
           coalesce(ls.labels, '[]'::json),
           t.due_date,
           t.start_date,
           t.estimate_minutes
         )::json_ticket_summary_head)::text, -1),
         ',"createdAt":"' || to_char(t.created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
           || '","updatedAt":"' || to_char(t.updated_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') || '"}'
  from tickets t
  left join ticket_kinds k on k.id = t.kind_id
  left join workflow_states s on s.id = t.state_id
  left join priorities pr on pr.id = t.priority_id
  left join projects p on p.id = t.project_id
  left join identities a on a.id = t.assignee_id
  left join contact_names an on an.workspace_id = t.workspace_id and an.identity_id = a.id
  left join memberships am on am.workspace_id = t.workspace_id and am.identity_id = a.id
  left join clients ac on ac.id = am.client_id
  left join identities r on r.id = t.reporter_id
  left join contact_names rn on rn.workspace_id = t.workspace_id and rn.identity_id = r.id
  left join memberships rm on rm.workspace_id = t.workspace_id and rm.identity_id = r.id
  left join clients rc on rc.id = rm.client_id
  left join clients b on b.id = t.billing_client_id
  left join ticket_label_sets ls on ls.ticket_id = t.id
  where t.id = any(ids)
  on conflict (ticket_id) do update set head = excluded.head, tail = excluded.tail
  where (ticket_summaries.head, ticket_summaries.tail) is distinct from (excluded.head, excluded.tail);
end $$;

-- Locks the tickets, then writes their summaries from what is committed by then and this transaction's own rows.
create function refresh_ticket_summaries(ids uuid[]) returns void language plpgsql as $$
begin
  if cardinality(ids) = 0 then return; end if;
  perform 1 from tickets where id = any(ids) order by id for no key update;
  perform compute_ticket_summaries(ids);
end $$;

-- The ticket's own columns: a new ticket (invisible to others), or an update (its rows locked by the update itself).
create function ticket_summaries_of_tickets() returns trigger language plpgsql as $$
begin
  if tg_op = 'INSERT' then
    perform compute_ticket_summaries(array(select id from new_rows));
  else
    perform compute_ticket_summaries(array(
      select n.id from new_rows n join old_rows o on o.id = n.id
      where (n.workspace_id, n.project_id, n.number, n.title, n.kind_id, n.state_id, n.priority_id, n.assignee_id, n.reporter_id,
             n.billing_client_id, n.due_date, n.start_date, n.estimate_minutes, n.created_at, n.updated_at)
            is distinct from
            (o.workspace_id, o.project_id, o.number, o.title, o.kind_id, o.state_id, o.priority_id, o.assignee_id, o.reporter_id,
             o.billing_client_id, o.due_date, o.start_date, o.estimate_minutes, o.created_at, o.updated_at)));
  end if;
  return null;
end $$;
create trigger ticket_summaries_insert after insert on tickets
  referencing new table as new_rows for each statement execute function ticket_summaries_of_tickets();
create trigger ticket_summaries_update after update on tickets
  referencing old table as old_rows new table as new_rows for each statement execute function ticket_summaries_of_tickets();

-- The tickets a person is assignee or reporter of in workspace `ws` (every workspace when null):
-- two index ranges (tickets_assignee_idx, tickets_reporter_idx), not a scan for `assignee or reporter`.
create function ticket_ids_of_person(ws uuid, person uuid) returns setof uuid language sql stable as $$
  select t.id from tickets t where t.assignee_id = person and (ws is null or t.workspace_id = ws)
  union
  select t.id from tickets t where t.reporter_id = person and (ws is null or t.workspace_id = ws)
$$;

-- A row a summary names: the tickets that name it, when what the summary shows of it changed. The
-- changed rows come first and their tickets are looked up per row (LATERAL), so an update that
-- changes nothing a summary shows (most do) reads no ticket.
create function ticket_summaries_of_named() returns trigger language plpgsql as $$
begin
  if tg_table_name = 'projects' then
    perform refresh_ticket_summaries(array(
      select t.id from new_rows n join old_rows o on o.id = n.id and (n.key, n.name) is distinct from (o.key, o.name)
      cross join lateral (select t.id from tickets t where t.project_id = n.id) t));
  elsif tg_table_name = 'ticket_kinds' then
    perform refresh_ticket_summaries(array(
      select t.id from new_rows n join old_rows o on o.id = n.id and (n.key, n.name) is distinct from (o.key, o.name)
      cross join lateral (select t.id from tickets t where t.workspace_id = n.workspace_id and t.kind_id = n.id) t));
  elsif tg_table_name = 'workflow_states' then
    perform refresh_ticket_summaries(array(
      select t.id from new_rows n join old_rows o on o.id = n.id
        and (n.key, n.name, n.category, n.position) is distinct from (o.key, o.name, o.category, o.position)
      cross join lateral (select t.id from tickets t where t.workspace_id = n.workspace_id and t.state_id = n.id) t));
  elsif tg_table_name = 'priorities' then
    perform refresh_ticket_summaries(array(
      select t.id from new_rows n join old_rows o on o.id = n.id and (n.key, n.name, n.position) is distinct from (o.key, o.name, o.position)
      cross join lateral (select t.id from tickets t where t.workspace_id = n.workspace_id and t.priority_id = n.id) t));
  elsif tg_table_name = 'clients' then
    -- the billing client, and the client named beside a client user (their membership's)
    perform refresh_ticket_summaries(array(
      select t.id from new_rows n join old_rows o on o.id = n.id and n.name is distinct from o.name
      cross join lateral (select t.id from tickets t where t.workspace_id = n.workspace_id and t.billing_client_id = n.id
                          union
                          select p.id from memberships m cross join lateral ticket_ids_of_person(m.workspace_id, m.identity_id) p(id)
                          where m.client_id = n.id) t));
  elsif tg_table_name = 'identities' then
    perform refresh_ticket_summaries(array(
      select t.id from new_rows n join old_rows o on o.id = n.id and n.name is distinct from o.name
      cross join lateral ticket_ids_of_person(null, n.id) t(id)));
  end if;
  return null;
end $$;

do $$
declare tab text;
begin
  foreach tab in array array['projects', 'ticket_kinds', 'workflow_states', 'priorities', 'clients', 'identities'] loop
    execute format('create trigger ticket_summaries_named after update on %I referencing old table as old_rows new table as new_rows '
                   'for each statement execute function ticket_summaries_of_named()', tab);
  end loop;
end $$;

-- A person's name in a workspace (contact_names) or their client there (memberships): the workspace's tickets they are assignee or reporter of.
create function ticket_summaries_of_people() returns trigger language plpgsql as $$
begin
  if tg_op = 'INSERT' then
    perform refresh_ticket_summaries(array(
      select t.id from new_rows x cross join lateral ticket_ids_of_person(x.workspace_id, x.identity_id) t(id)));
  elsif tg_op = 'DELETE' then
    perform refresh_ticket_summaries(array(
      select t.id from old_rows x cross join lateral ticket_ids_of_person(x.workspace_id, x.identity_id) t(id)));
  elsif tg_table_name = 'contact_names' then
    perform refresh_ticket_summaries(array(
      select t.id from new_rows x join old_rows o on (o.workspace_id, o.identity_id) = (x.workspace_id, x.identity_id) and o.name is distinct from x.name
      cross join lateral ticket_ids_of_person(x.workspace_id, x.identity_id) t(id)));
  else
    perform refresh_ticket_summaries(array(
      select t.id from new_rows x join old_rows o on (o.workspace_id, o.identity_id) = (x.workspace_id, x.identity_id) and o.client_id is distinct from x.client_id
      cross join lateral ticket_ids_of_person(x.workspace_id, x.identity_id) t(id)));
  end if;
  return null;
end $$;

-- The ticket's labels array (sql/106).
create function ticket_summaries_of_label_sets() returns trigger language plpgsql as $$
begin
  if tg_op = 'INSERT' then
    perform refresh_ticket_summaries(array(select ticket_id from new_rows));
  else
    perform refresh_ticket_summaries(array(select ticket_id from old_rows));
  end if;
  return null;
end $$;

do $$
declare tab text; fn text;
begin
  foreach tab in array array['contact_names', 'memberships', 'ticket_label_sets'] loop
    fn := case when tab = 'ticket_label_sets' then 'ticket_summaries_of_label_sets' else 'ticket_summaries_of_people' end;
    execute format('create trigger ticket_summaries_insert after insert on %I referencing new table as new_rows '
                   'for each statement execute function %I()', tab, fn);
    execute format('create trigger ticket_summaries_update after update on %I referencing old table as old_rows new table as new_rows '
                   'for each statement execute function %I()', tab, fn);
    execute format('create trigger ticket_summaries_delete after delete on %I referencing old table as old_rows '
                   'for each statement execute function %I()', tab, fn);
  end loop;
end $$;

select compute_ticket_summaries(array(select id from tickets));

-- No read-mark triggers here (sql/098): the summaries change only with rows whose own triggers move
-- the workspace's read mark in the same transaction, and the triggers' dynamic statement was planned
-- on every ticket write.

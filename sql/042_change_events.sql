-- The change feed shows exactly what the caller's timeline shows, so each change row names its
-- event (`event_id`; null on `deleted` rows): the feed applies the page's event filter to it
-- (src/core/access/events.ts). No foreign key: a deleted ticket's events go with it, its change
-- rows stay.
--
-- `human_id` and the prior_* columns now describe the ticket as it was just before the whole
-- operation: every row a transaction writes on one ticket shares that state, so an intermediate
-- state nobody could observe (a move recorded before the assignee change of the same request)
-- never decides a `gone`, and a `gone` names the ticket as the caller last saw it (a move's
-- fromHumanId, not the number it got in a project the caller cannot see).

alter table ticket_changes add column event_id uuid;

-- The trigger inserted change rows in event order: the n-th change of a (ticket, kind, instant)
-- is the n-th event of it.
with ev as (
  select e.id, e.ticket_id, e.kind, e.created_at,
         row_number() over (partition by e.ticket_id, e.kind, e.created_at order by e.seq) as n
  from ticket_events e
), ch as (
  select c.id, c.ticket_id, c.kind, c.at,
         row_number() over (partition by c.ticket_id, c.kind, c.at order by c.id) as n
  from ticket_changes c where c.kind <> 'deleted'
)
update ticket_changes tc set event_id = ev.id
from ch join ev on ev.ticket_id = ch.ticket_id and ev.kind = ch.kind and ev.created_at = ch.at and ev.n = ch.n
where tc.id = ch.id;

update ticket_changes c set human_id = e.payload->>'fromHumanId'
from ticket_events e
where e.id = c.event_id and c.kind = 'moved' and coalesce(e.payload->>'fromHumanId', '') <> '';

create or replace function ticket_event_to_change() returns trigger language plpgsql as $$
declare
  earlier record;
  t record;
  p_project uuid;
  p_reporter uuid;
  p_assignee uuid;
  p_viewers uuid[];
  p_archived boolean;
  p_human text;
  who uuid := wt_try_uuid(new.payload->>'identityId');
begin
  -- Rows this transaction already wrote on the ticket are the only unnumbered ones (numbers are
  -- given at commit); they hold the state before the operation, as corrected so far.
  select c.prior_project_id, c.prior_reporter_id, c.prior_assignee_id, c.prior_viewer_ids, c.prior_archived, c.human_id
    into earlier
    from ticket_changes c where c.ticket_id = new.ticket_id and c.seq is null order by c.id limit 1;
  if found then
    p_project := earlier.prior_project_id;
    p_reporter := earlier.prior_reporter_id;
    p_assignee := earlier.prior_assignee_id;
    p_viewers := earlier.prior_viewer_ids;
    p_archived := earlier.prior_archived;
    p_human := earlier.human_id;
  else
    select tk.project_id, tk.reporter_id, tk.assignee_id, tk.archived, coalesce(p.key, 'INBOX') || '-' || tk.number as human_id,
           array(select v.identity_id from ticket_viewers v where v.ticket_id = tk.id) as viewers
      into t
      from tickets tk left join projects p on p.id = tk.project_id
     where tk.id = new.ticket_id;
    p_project := t.project_id;
    p_reporter := t.reporter_id;
    p_assignee := t.assignee_id;
    p_viewers := t.viewers;
    p_archived := t.archived;
    p_human := t.human_id;
  end if;

  -- Undo what this event changed (an operation changes each of these at most once).
  if new.kind = 'moved' then
    p_project := wt_try_uuid(new.payload->>'fromProjectId');
    p_human := coalesce(nullif(new.payload->>'fromHumanId', ''), p_human);
  elsif new.kind = 'field_changed' and new.payload->>'field' in ('assigneeId', 'assignee') then
    p_assignee := wt_try_uuid(new.payload->>'old');
  elsif new.kind = 'viewer_removed' and who is not null then
    p_viewers := array_append(array_remove(p_viewers, who), who);
  elsif new.kind = 'viewer_added' and who is not null then
    p_viewers := array_remove(p_viewers, who);
  elsif new.kind = 'archived' then
    p_archived := false;
  elsif new.kind = 'restored' then
    p_archived := true;
  end if;

  update ticket_changes
     set prior_project_id = p_project, prior_reporter_id = p_reporter, prior_assignee_id = p_assignee,
         prior_viewer_ids = p_viewers, prior_archived = p_archived, human_id = p_human
   where ticket_id = new.ticket_id and seq is null;
  insert into ticket_changes (workspace_id, ticket_id, event_id, human_id, kind, at, prior_project_id, prior_reporter_id, prior_assignee_id, prior_viewer_ids, prior_archived)
  values (new.workspace_id, new.ticket_id, new.id, p_human, new.kind, new.created_at, p_project, p_reporter, p_assignee, p_viewers, p_archived);
  return null;
end $$;

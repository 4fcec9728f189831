-- Processes cache each workspace's workflow; any change to it tells them to drop their copy.
create function notify_workflow_changed() returns trigger language plpgsql as $$
begin
  perform pg_notify('wt_workflow_changed', coalesce(new.workspace_id, old.workspace_id)::text);
  return null;
end $$;

create trigger workflow_states_changed after insert or update or delete on workflow_states for each row execute function notify_workflow_changed();
create trigger ticket_kinds_changed after insert or update or delete on ticket_kinds for each row execute function notify_workflow_changed();
create trigger priorities_changed after insert or update or delete on priorities for each row execute function notify_workflow_changed();
create trigger labels_changed after insert or update or delete on labels for each row execute function notify_workflow_changed();

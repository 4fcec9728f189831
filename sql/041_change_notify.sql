-- Announce each numbered change (after commit, as NOTIFY is), so web processes can answer a
-- caught-up poller from memory: `wt_changes` carries "<workspace id>:<seq>".
create or replace function assign_change_seq() returns trigger language plpgsql as $$
declare
  n bigint;
begin
  perform pg_advisory_xact_lock(7262100, hashtext(new.workspace_id::text));
  n := nextval('ticket_change_seq');
  update ticket_changes set seq = n where id = new.id;
  perform pg_notify('wt_changes', new.workspace_id::text || ':' || n);
  return null;
end $$;

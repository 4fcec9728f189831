-- Helpers and indexes for reading tickets (GET /tickets, GET /tickets/{ref}).

-- A uuid from text, or null when the text is not one: timeline payloads are jsonb written by
-- many operations, and a read must never fail on one odd value.
create function wt_try_uuid(p text) returns uuid
language sql immutable parallel safe as $$
  select case when p ~* '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$' then p::uuid end
$$;

-- GET /tickets?archived=true pages through the (few) archived tickets without walking the rest.
create index tickets_archived_updated_idx on tickets (workspace_id, updated_at desc, id desc) where archived;


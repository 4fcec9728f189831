-- Each timeline event keeps its own JSON text (issue 25, "Load").
--
-- A ticket page lists its whole timeline (the contract's `events[]`), and PostgreSQL built every
-- event's object on every read: json_build_object, the ISO date's to_char, the payload's jsonb
-- output and the actor's object, about 15 us an event, so a ticket with 1,000 events cost 15 ms
-- of the database's CPU per read (the 200-client mix logs its time on one ticket, whose page ended
-- up costing 100 ms and more). An event is written once and changed only by a redaction, so its
-- text is made when it is written: `json_head` is `{"id":…,"kind":…,"actor":` and `json_tail` is
-- `,"subject":…,"payload":…,"createdAt":"…"}`. The reader puts the actor's object between them
-- (looked up at read, never stored: a person's name may change) and, for the two kinds whose
-- payload depends on who reads it (src/core/access/events.ts PRINCIPAL_PAYLOAD_KINDS), a tail made
-- with `ticket_event_json_tail` from the payload that principal may see. Concatenating the stored
-- parts costs about a third of building them (measured with 1,000 events: 4.5 against 15 ms).

create function ticket_event_json_head(id uuid, kind text) returns text
language sql stable parallel safe as $$
  select '{"id":"' || id::text || '","kind":' || to_json(kind)::text || ',"actor":'
$$;

-- `createdAt` as isoSql (src/core/tickets/summary.ts) writes every datetime of the contract.
create function ticket_event_json_tail(subject text, payload jsonb, created_at timestamptz) returns text
language sql stable parallel safe as $$
  select ',"subject":' || coalesce(to_json(subject)::text, 'null') || ',"payload":' || coalesce(payload::text, 'null')
         || ',"createdAt":"' || to_char(created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') || '"}'
$$;

alter table ticket_events add column json_head text, add column json_tail text;
update ticket_events set json_head = ticket_event_json_head(id, kind), json_tail = ticket_event_json_tail(subject, payload, created_at);
alter table ticket_events alter column json_head set not null, alter column json_tail set not null;

create function ticket_event_json() returns trigger language plpgsql as $$
begin
  new.json_head := ticket_event_json_head(new.id, new.kind);
  new.json_tail := ticket_event_json_tail(new.subject, new.payload, new.created_at);
  return new;
end $$;

create trigger ticket_event_json before insert or update on ticket_events
  for each row execute function ticket_event_json();

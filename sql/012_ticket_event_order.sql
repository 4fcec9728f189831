-- Events written by one operation share created_at; ids are random. An insertion sequence keeps
-- a timeline (and what a poller compares) in the order the events were written.
alter table ticket_events add column seq bigint generated always as identity;

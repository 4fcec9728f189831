-- Row types named like the contract's TicketSummary and its nested objects (issue 25, "Board").
--
-- Every list page, board and "my work" builds its summaries in SQL. Built with `json_build_object`
-- (about 40 key/value pairs a summary), PostgreSQL looks up each value's type and output function
-- on every call: 400 summaries spent most of a board's statement there. A row of a named type is
-- written as JSON (to_json, json_agg) from the type's cached description, with the attributes' names
-- as keys: the same object, measured 2-2.5x faster to write (.prof-style interleaved runs, see
-- docs/decisions.md "Summaries written from typed rows"). src/core/tickets/summary.ts fills them
-- in this attribute order; a key added to TicketSummary needs an `alter type ... add attribute` here.

create type json_named_ref as (id uuid, key text, name text);
create type json_state as (id uuid, key text, name text, category text, position integer);
create type json_priority as (id uuid, key text, name text, position integer);
create type json_person as (id uuid, name text, "clientName" text);
create type json_client as (id uuid, name text);

create type json_ticket_summary as (
  id uuid,
  "humanId" text,
  title text,
  kind json,
  state json,
  priority json,
  project json_named_ref,
  queue text,
  assignee json_person,
  reporter json_person,
  "billingClient" json_client,
  labels json,
  "dueDate" date,
  "startDate" date,
  "estimateMinutes" integer,
  "parentId" uuid,
  "commentCount" integer,
  "createdAt" text,
  "updatedAt" text
);

-- Mail trust (issue 19): a From header proves nothing. What proves a sender: a reply address's
-- token (we sent that address to that recipient), or a verified DKIM signature aligned with the
-- From domain (our own check, or a trusted receiving server's Authentication-Results).

-- One row per reply address handed out: `reply+<token>@...` (src/core/mail/intake/reply-token.ts).
-- Only the SHA-256 of the token is stored, as for API tokens: the table cannot be used to write as anyone.
create table reply_tokens (
  token_hash text primary key check (token_hash ~ '^[0-9a-f]{64}$'),
  workspace_id uuid not null references workspaces on delete cascade,
  -- the recipient the address was sent to, lower-cased; a reply From this address is theirs
  email text not null check (email ~ '^[^@\s]+@[^@\s]+$'),
  -- what the message that carried it was about: a ticket (a reply may be filed on it), or a timesheet email
  ticket_id uuid references tickets on delete cascade,
  timesheet_id uuid references timesheets on delete cascade,
  delivery_id uuid references document_deliveries on delete cascade,
  created_at timestamptz not null default now()
);
create index reply_tokens_workspace_idx on reply_tokens (workspace_id, created_at);

-- What the intake found out about the sender: `reply-token=valid`, `dkim=pass (d=acme.test) dmarc=pass`, `dmarc=fail` ...
alter table intake_messages add column verdict text check (verdict is null or length(verdict) <= 500);

-- A receiving server whose Authentication-Results header the intake may believe (its authserv-id).
alter table mailboxes add column trusted_authserv_id text check (trusted_authserv_id is null or length(trusted_authserv_id) between 1 and 255);

-- Names learned from mail belong to the workspace that received them (issue 19, defect 9): a
-- mail-learned display name is shown in that workspace only, until an admin of it names the person.
create table contact_names (
  workspace_id uuid not null references workspaces on delete cascade,
  identity_id uuid not null references identities on delete cascade,
  name text not null check (length(name) between 1 and 200),
  primary key (workspace_id, identity_id)
);
create index contact_names_identity_idx on contact_names (identity_id);

-- The name a workspace shows for a person: its own mail-learned name, else the identity's.
-- A plain SQL expression, inlined by the planner into the presenters' queries.
create function person_name(uuid, uuid, text) returns text language sql stable parallel safe as $$
  select coalesce((select c.name from contact_names c where c.workspace_id = $1 and c.identity_id = $2), $3)
$$;

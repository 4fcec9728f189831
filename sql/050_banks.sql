-- Time banks (issue 6): a client's prepaid hours. Deposits are in minutes; the balance is
-- derived, never stored: deposits minus the billed minutes of time entries whose ticket's
-- effective billing policy is `bank:<bank id>` (src/core/banks/balances.ts). Billing runs draw a
-- bank down simply by marking entries billed; the billing area may add allocation rows later.

create table banks (
  id uuid primary key default gen_random_uuid(),
  workspace_id uuid not null references workspaces on delete cascade,
  client_id uuid not null references clients on delete restrict,
  name text not null check (length(name) between 1 and 200),
  created_by uuid references identities on delete set null,
  created_at timestamptz not null default now(),
  unique (client_id, name)
);
create index banks_workspace_idx on banks (workspace_id, client_id);

-- A deposit tops a bank up; a negative one corrects an earlier deposit (never zero).
create table bank_deposits (
  id uuid primary key default gen_random_uuid(),
  bank_id uuid not null references banks on delete cascade,
  minutes integer not null check (minutes <> 0 and minutes between -10000000 and 10000000),
  deposited_on date not null,
  note text check (note is null or length(note) <= 500),
  created_by uuid references identities on delete set null,
  created_at timestamptz not null default now()
);
create index bank_deposits_bank_idx on bank_deposits (bank_id);

-- Balances sum the billed minutes of bank-policy tickets: find a bank's billed entries by ticket.
create index time_entries_ticket_billed_idx on time_entries (ticket_id) where billed;

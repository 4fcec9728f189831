-- What a timesheet shows beyond time and money (issue 23): the agency's legal name, address, tax
-- id, bank details and logo (workspace settings); the client's billing address, tax id and line
-- layout; a purchase-order number per run. All of it is fixed on the timesheet at allocation
-- (`details`, `logo_id`), so a later change of the settings alters no issued document.

-- A logo is never changed or deleted: a new upload is a new row, and timesheets keep theirs.
create table logos (
  id uuid primary key default gen_random_uuid(),
  workspace_id uuid not null references workspaces on delete cascade,
  content_type text not null check (content_type in ('image/png', 'image/jpeg')),
  content bytea not null check (octet_length(content) between 1 and 262144),
  created_at timestamptz not null default now()
);
create index logos_workspace on logos (workspace_id);

alter table workspaces
  add column legal_name text check (legal_name is null or length(legal_name) between 1 and 200),
  add column address text check (address is null or length(address) between 1 and 500),
  add column tax_id text check (tax_id is null or length(tax_id) between 1 and 50),
  add column bank_account_holder text check (bank_account_holder is null or length(bank_account_holder) between 1 and 200),
  add column bank_iban text check (bank_iban is null or bank_iban ~ '^[A-Z]{2}[0-9]{2}[A-Z0-9]{11,30}$'),
  add column bank_bic text check (bank_bic is null or bank_bic ~ '^[A-Z]{6}[A-Z0-9]{2}([A-Z0-9]{3})?$'),
  add column bank_details text check (bank_details is null or length(bank_details) between 1 and 500),
  add column logo_id uuid references logos on delete set null;

alter table clients
  add column billing_address text check (billing_address is null or length(billing_address) between 1 and 500),
  add column tax_id text check (tax_id is null or length(tax_id) between 1 and 50),
  add column timesheet_lines text not null default 'ticket' check (timesheet_lines in ('ticket', 'entry'));

alter table billing_runs
  add column po_number text check (po_number is null or length(po_number) between 1 and 100);

-- null on timesheets allocated before issue 23's details: they render as they always did
alter table timesheets
  add column details jsonb,
  add column logo_id uuid references logos on delete restrict;

-- Review before sending, void notices and replacements (issue 23).

-- How a client's timesheets go out: `review` holds them until an operator approves the run,
-- `automatic` emails them once rendered. New clients (and the demo) start at `review`; clients
-- that existed before keep what they had, immediate sending.
alter table clients add column delivery text not null default 'automatic' check (delivery in ('review', 'automatic'));
alter table clients alter column delivery set default 'review';

-- Fixed on each timesheet at allocation, so a later change of the client alters no run:
-- `review`: its deliveries wait for the run's approval, and its client's users cannot see it
-- until then; `replaces_number`: the voided number of the same client and period it replaces.
alter table timesheets
  add column review boolean not null default false,
  add column replaces_number text;

alter table billing_runs
  add column approved_at timestamptz,
  add column approved_by uuid references identities on delete set null;
alter table billing_runs drop constraint billing_runs_status_check;
alter table billing_runs add constraint billing_runs_status_check
  check (status in ('allocating', 'rendering', 'awaiting_approval', 'delivering', 'completed', 'failed', 'voided'));

-- A delivery is a timesheet email or, once its run is voided, the notice to a recipient who
-- received it (`notice_of`: that delivery). One notice per delivery.
alter table document_deliveries
  add column kind text not null default 'timesheet' check (kind in ('timesheet', 'void_notice')),
  add column notice_of uuid references document_deliveries on delete cascade,
  add constraint document_deliveries_notice_check check ((kind = 'void_notice') = (notice_of is not null));
drop index document_deliveries_recipient_key;
create unique index document_deliveries_recipient_key on document_deliveries (timesheet_id, recipient_id) where kind = 'timesheet';
create unique index document_deliveries_notice_key on document_deliveries (notice_of);

-- Tax and payment terms per client (issue 23), fixed on each timesheet when its run is allocated,
-- so a later change of the client's settings never alters an issued document.
alter table clients
  add column tax_rate_bp integer not null default 0 check (tax_rate_bp between 0 and 10000),
  add column tax_label text check (tax_label is null or length(tax_label) between 1 and 60),
  add column tax_note text check (tax_note is null or length(tax_note) between 1 and 300),
  add column payment_terms_days integer check (payment_terms_days is null or payment_terms_days between 0 and 365);

alter table timesheets
  add column tax_rate_bp integer not null default 0,
  add column tax_label text,
  add column tax_note text,
  add column due_on date;

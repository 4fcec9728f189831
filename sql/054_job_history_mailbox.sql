-- The mailbox a mail job served, so job history can be searched by it like by run or delivery.
alter table job_history add column mailbox_id uuid;
create index job_history_mailbox_idx on job_history (mailbox_id) where mailbox_id is not null;

-- Issue 22: clients and projects are set up through the API, and can be archived: kept with their
-- tickets, time and documents, left out of lists and pickers unless asked for, and (a project)
-- closed to new tickets. Restoring clears the mark.
alter table clients add column archived_at timestamptz;
alter table projects add column archived_at timestamptz;

-- Relations, comments and attachments (issue 3).

-- A code-host reference is stored once per ticket: posting the same commit or pull request
-- again (CI jobs retry) answers the existing reference instead of piling up copies.
create unique index codehost_links_ref_key on codehost_links (ticket_id, lower(repo), coalesce(sha, ''), coalesce(pr, 0));

-- Attachments of one comment (uploads onto a comment; audience changes of a comment follow).
create index attachments_comment_idx on attachments (comment_id) where comment_id is not null;

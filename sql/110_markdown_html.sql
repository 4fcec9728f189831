-- The sanitised HTML of a comment's body and a ticket's description, kept beside its Markdown
-- (issue 25, "API overhead": the ticket page).
--
-- The page returns `bodyHtml` beside every comment's `body` and `descriptionHtml` beside the
-- description. The web process rendered them on every read (markdown-it and sanitize-html, cached
-- by source in each process), splitting the comments PostgreSQL had written to put the HTML in:
-- a tenth of the web's CPU per page. A page is read far more often than a comment is written, so
-- the writer renders once (src/core/tickets/markdown.ts, `renderMarkdown`) and the page's
-- statement writes the whole comment.
--
-- `*_html_version` is the renderer's version the HTML was made by (MARKDOWN_VERSION): a read
-- uses stored HTML only when it is the current one and renders anything else itself, so rows
-- written before this migration, by a writer that does not render (a seed, a test's insert), or by
-- an older renderer are still answered right, only not faster.

alter table comments add column body_html text, add column body_html_version int;
alter table tickets add column description_html text, add column description_html_version int;

-- A body changed without its HTML (any writer that did not render): the stored HTML no longer
-- belongs to it and is dropped, so it can never be shown beside another text.
create function comments_html_follows_body() returns trigger language plpgsql as $$
begin
  new.body_html := null;
  new.body_html_version := null;
  return new;
end $$;

create trigger comments_html_follows_body before update of body on comments
  for each row when (new.body is distinct from old.body and new.body_html is not distinct from old.body_html)
  execute function comments_html_follows_body();

create function tickets_html_follows_description() returns trigger language plpgsql as $$
begin
  new.description_html := null;
  new.description_html_version := null;
  return new;
end $$;

create trigger tickets_html_follows_description before update of description on tickets
  for each row when (new.description is distinct from old.description and new.description_html is not distinct from old.description_html)
  execute function tickets_html_follows_description();

-- What src/core/tickets/markdown-refresh.ts renders (the `markdown:refresh` crontab task): rows
-- whose HTML is missing or older than the renderer, found by these indexes, not by a scan.
create index comments_body_html_version on comments (body_html_version);
create index tickets_description_html_version on tickets (description_html_version);

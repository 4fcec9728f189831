-- tickets.comment_count is kept by the database itself, so every way a comment is written
-- (API, MCP, mail intake, imports) keeps it right. It counts comments of every audience;
-- a reader who may not read every audience is given a filtered count instead.
create function comments_count_refresh() returns trigger language plpgsql as $$
begin
  if tg_op in ('DELETE', 'UPDATE') then
    update tickets set comment_count = greatest(comment_count - 1, 0) where id = old.ticket_id;
  end if;
  if tg_op in ('INSERT', 'UPDATE') then
    update tickets set comment_count = comment_count + 1 where id = new.ticket_id;
  end if;
  return null;
end $$;

create trigger comments_count_refresh after insert or delete or update of ticket_id on comments
  for each row execute function comments_count_refresh();

update tickets t set comment_count = (select count(*) from comments c where c.ticket_id = t.id);

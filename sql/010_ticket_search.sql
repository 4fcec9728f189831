-- Full-text search over tickets (GET /tickets?q=).
-- search_public: title (weight A), description (B) and client-audience comments; everyone who may
--   see the ticket may search it.
-- search_internal: internal comments; only workspace users search it, as
--   (search_public || search_internal), which has an index of its own.
-- The 'simple' configuration: no stemming and no stop words, because tickets are written in
-- whatever language the client speaks; `websearch_to_tsquery('simple', q)` matches whole words,
-- "quoted phrases", `or` and `-exclusions`.

alter table tickets
  add column search_public tsvector not null default ''::tsvector,
  add column search_internal tsvector not null default ''::tsvector;

-- All comment bodies of one audience on a ticket, oldest first, capped so a very long
-- conversation cannot push a tsvector past PostgreSQL's 1 MB limit.
create function ticket_comment_text(p_ticket uuid, p_audience text) returns text
language sql stable as $$
  select left(coalesce(string_agg(c.body, ' ' order by c.created_at, c.id), ''), 500000)
  from comments c where c.ticket_id = p_ticket and c.audience = p_audience
$$;

create function ticket_search_public(p_title text, p_description text, p_comments text) returns tsvector
language sql immutable as $$
  select setweight(to_tsvector('simple', coalesce(p_title, '')), 'A')
      || setweight(to_tsvector('simple', left(coalesce(p_description, ''), 500000)), 'B')
      || to_tsvector('simple', coalesce(p_comments, ''))
$$;

-- Title or description changed: recompute the public vector in the same row write.
create function tickets_search_refresh() returns trigger
language plpgsql as $$
begin
  if tg_op = 'INSERT' then
    new.search_public := ticket_search_public(new.title, new.description, '');
  elsif new.title is distinct from old.title or new.description is distinct from old.description then
    new.search_public := ticket_search_public(new.title, new.description, ticket_comment_text(new.id, 'client'));
  end if;
  return new;
end $$;

create trigger tickets_search_refresh before insert or update of title, description on tickets
  for each row execute function tickets_search_refresh();

-- A comment was added, edited, moved or deleted: recompute both vectors of its ticket(s).
-- The row lock first, then the recompute in a new statement: under READ COMMITTED the second
-- statement's snapshot then includes a concurrent writer's comment that committed while we waited.
create function comments_search_refresh() returns trigger
language plpgsql as $$
declare
  tid uuid;
begin
  for tid in
    select distinct x from unnest(array[
      case when tg_op <> 'INSERT' then old.ticket_id end,
      case when tg_op <> 'DELETE' then new.ticket_id end]) as x
    where x is not null
  loop
    perform 1 from tickets where id = tid for update;
    update tickets
       set search_public = ticket_search_public(title, description, ticket_comment_text(id, 'client')),
           search_internal = to_tsvector('simple', ticket_comment_text(id, 'internal'))
     where id = tid;
  end loop;
  return null;
end $$;

create trigger comments_search_refresh after insert or delete or update of body, audience, ticket_id on comments
  for each row execute function comments_search_refresh();

update tickets
   set search_public = ticket_search_public(title, description, ticket_comment_text(id, 'client')),
       search_internal = to_tsvector('simple', ticket_comment_text(id, 'internal'));

create index tickets_search_public_idx on tickets using gin (search_public);
create index tickets_search_all_idx on tickets using gin ((search_public || search_internal));

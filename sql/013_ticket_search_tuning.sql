-- Every search scans the GIN pending list (new entries not yet merged into the index) from end to
-- end. With the default 4 MB limit that measured 2-11 ms per search on 100k tickets, against
-- 0.02 ms merged. A comment rewrites its ticket's vectors (every lexeme of the conversation), so
-- turning fastupdate off would move that cost onto each write instead; a small pending list keeps
-- writes batched and bounds what a search pays (merged by the writer that fills it, or vacuum).
alter index tickets_search_public_idx set (gin_pending_list_limit = 256);
alter index tickets_search_all_idx set (gin_pending_list_limit = 256);

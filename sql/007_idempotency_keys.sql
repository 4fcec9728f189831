-- Responses to token-authenticated POSTs (and MCP write tool calls) sent with an idempotency key,
-- kept 24 hours so that a retry is answered from here instead of writing again. Keys belong to one
-- token (so to one workspace). The row is inserted and its response stored in the same
-- transaction as the request's own writes: `status` is null only inside that transaction, never
-- in a committed row. Expired rows are deleted by the `limits:cleanup` cron task.
create table idempotency_keys (
  token_id uuid not null references api_tokens on delete cascade,
  key text not null check (length(key) between 1 and 255),
  -- sha-256 of method, path and body (REST) or tool name and arguments (MCP)
  fingerprint bytea not null,
  status integer check (status between 200 and 499),
  -- the response body exactly as sent (JSON text), so a replay is byte for byte the same
  body text,
  headers jsonb not null default '{}'::jsonb,
  created_at timestamptz not null default now(),
  expires_at timestamptz not null,
  primary key (token_id, key)
);
create index idempotency_keys_expires_idx on idempotency_keys (expires_at);

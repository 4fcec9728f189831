-- OAuth 2.1 for MCP (issue 24): the authorization server's state (oidc-provider's models:
-- authorization codes, access and refresh tokens, grants, interactions, its sessions, registered
-- clients), one row per object. `id_hash` is the SHA-256 of the object's id: for codes and tokens
-- the id is the secret itself, so it is never stored (the payload is stored without it too).
create table oauth_records (
  model text not null,
  id_hash bytea not null,
  payload jsonb not null,
  -- the grant a code or token belongs to (revoked together: a reused code, a replayed refresh token)
  grant_id text,
  -- an interaction's or session's uid (oidc-provider looks sessions up by it)
  uid text,
  expires_at timestamptz,
  consumed_at timestamptz,
  primary key (model, id_hash)
);
create index oauth_records_grant_idx on oauth_records (grant_id) where grant_id is not null;
create index oauth_records_uid_idx on oauth_records (model, uid) where uid is not null;
create index oauth_records_expires_idx on oauth_records (expires_at) where expires_at is not null;

-- What a person approved on the consent page for one client in one workspace. The grant is backed
-- by a delegated API token row (never shown, its hash unusable as a `wt_` secret): scopes, project
-- allow-list, revocation, last use, rate limits, idempotency keys and audit are the token's, so an
-- OAuth access token is exactly a delegated token of the person. Revoking that row ends the grant.
create table oauth_grants (
  grant_id text primary key,
  token_id uuid not null unique references api_tokens on delete cascade,
  workspace_id uuid not null references workspaces on delete cascade,
  identity_id uuid not null references identities on delete cascade,
  client_id text not null check (length(client_id) between 1 and 2000),
  client_name text not null check (length(client_name) between 1 and 200),
  created_at timestamptz not null default now()
);
create index oauth_grants_person_idx on oauth_grants (identity_id, client_id);

-- Counters of rate-limiter-flexible's PostgreSQL store (RateLimiterPostgres), shared by every web
-- process: failed logins and re-authentications per email and per address, requests per token.
-- The columns are the ones the library reads and writes; `key` is text rather than its
-- varchar(255) because a key carries an email of up to 320 characters. `expire` is epoch
-- milliseconds (the library's clock). Expired rows are deleted by the `limits:cleanup` cron task.
-- Every request updates one row in place: leave room on each page for HOT updates.
create table rate_limits (
  key text primary key,
  points integer not null default 0,
  expire bigint
) with (fillfactor = 70);

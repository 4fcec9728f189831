-- Issue 19: invariants the database keeps whatever writes the rows.

-- The billing-operator flag means something only for workspace users: a membership that becomes a
-- client one (a former member re-added as a client user) loses it, whichever writer changed the
-- role (the CLI, the mail intake, a seed), and no client membership can hold it.
update memberships set billing_operator = false where billing_operator and role in ('client', 'client_elevated');

create function memberships_client_drops_flag() returns trigger language plpgsql as $$
begin
  if new.role in ('client', 'client_elevated') then
    new.billing_operator := false;
  end if;
  return new;
end $$;
create trigger memberships_client_drops_flag before insert or update of role, billing_operator on memberships
  for each row execute function memberships_client_drops_flag();
alter table memberships add constraint memberships_operator_is_staff
  check (not (billing_operator and role in ('client', 'client_elevated')));

-- Every audited action names the door it came through (the console, REST, MCP, the CLI, a job);
-- the rows written before were all the console's.
alter table ops_audit add column door text not null default 'console'
  check (door in ('console', 'rest', 'mcp', 'cli', 'job'));
alter table ops_audit alter column door drop default;

-- A billing recipient's address is one bare address: no list, no line break, no display name (the
-- name has its own column). The writers check it with the mailer's own address parser
-- (src/core/mail/address.ts); this is the floor under them. NOT VALID: a row written before is
-- refused at send time instead of failing the migration.
alter table client_billing_recipients add constraint client_billing_recipients_one_address
  check (email is null or (length(email) <= 254 and email ~ '^[^@[:space:][:cntrl:],;:<>()"]+@[^@[:space:][:cntrl:],;:<>()"]+$')) not valid;

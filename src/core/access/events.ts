import type { Db } from '../../db/connect.ts';
import { isClientRole, type Principal } from '../auth/principal.ts';
import { readableAudiences } from './permissions.ts';
import { canSeeInbox, clientProjects, visibleTicket } from './visible.ts';

type Fragment = ReturnType<Db>;

/**
 * What a principal may see of the timeline: one rule for the ticket page (`eventsSql`) and the
 * change feed (`GET /changes`), so the feed never reports an event the page would not show, and
 * no payload names a ticket or project the caller cannot see.
 */

/** Field changes a client user does not see on the timeline: billing is internal. */
export const CLIENT_HIDDEN_FIELDS = ['billingClientId', 'billingPolicy', 'billingMode', 'billingDescription'];

/**
 * Whether the principal could see the ticket of change row `alias` (ticket_changes) as it was
 * just before that change: the row keeps the ticket's visibility columns of that moment.
 */
export function visibleBeforeChange(sql: Db, p: Principal, alias: string): Fragment {
  const c = sql(alias);
  return sql`(not ${c}.prior_archived and exists (
    select 1 from (select ${c}.ticket_id as id, ${c}.workspace_id, ${c}.prior_project_id as project_id,
                          ${c}.prior_reporter_id as reporter_id, ${c}.prior_assignee_id as assignee_id) prior
    where ${visibleTicket(sql, p, 'prior', { extraViewers: sql`${c}.prior_viewer_ids` })}))`;
}

/**
 * Whether ticket `id` may be named to the principal: it is visible now, or it was deleted and
 * the principal could see it right before (its `deleted` change row keeps that state), so the
 * other ends of a deleted ticket's links and its children keep their events for those who knew it.
 */
export function visibleTicketRef(sql: Db, p: Principal, id: Fragment): Fragment {
  return sql`(exists (select 1 from tickets rt where rt.id = ${id} and ${visibleTicket(sql, p, 'rt')})
    or exists (select 1 from ticket_changes rd
               where rd.ticket_id = ${id} and rd.kind = 'deleted' and rd.workspace_id = ${p.workspaceId}
                 and not exists (select 1 from tickets rx where rx.id = ${id}) and ${visibleBeforeChange(sql, p, 'rd')}))`;
}

/**
 * Whether project `id` (null: the Inbox) may be named to the principal: the projects it may
 * address (client users: their client's; a token: its allow-list), the Inbox only to those who
 * may see the Inbox.
 */
export function visibleProject(sql: Db, p: Principal, id: Fragment): Fragment {
  const inbox = canSeeInbox(p) ? sql`true` : sql`false`;
  const role = isClientRole(p.role) ? sql`${id} in (${clientProjects(sql, p.clientId!)})` : sql`true`;
  const allowed = p.projectIds ? sql`${id} = any(${p.projectIds as string[]}::uuid[])` : sql`true`;
  return sql`(case when ${id} is null then ${inbox} else (${role} and ${allowed}) end)`;
}

const ref = (sql: Db, alias: string, key: string): Fragment => sql`wt_try_uuid(${sql(alias)}.payload->>${key})`;

/**
 * Whether event row `alias` (ticket_events) is on the principal's timeline of its ticket (the
 * ticket itself being visible). Everyone: link events only when the other ticket may be named;
 * parent changes only when the old or the new parent may be named. Client users also do not
 * see events about internal comments or attachments, billing field changes, or time (`time_*`).
 */
export function visibleEvent(sql: Db, p: Principal, alias = 'e'): Fragment {
  const e = sql(alias);
  const aud = readableAudiences(p);
  const clientOnly = isClientRole(p.role)
    ? sql`and not (${e}.kind in ('comment_added', 'comment_edited', 'comment_deleted') and coalesce(${e}.payload->>'audience', 'internal') <> all(${aud}::text[]))
          and not (${e}.kind = 'attachment_added' and not exists (
                     select 1 from attachments ea where ea.id = ${ref(sql, alias, 'attachmentId')} and ea.audience = any(${aud}::text[])))
          and not (${e}.kind = 'field_changed' and ${e}.payload->>'field' = any(${CLIENT_HIDDEN_FIELDS}::text[]))
          and left(${e}.kind, 5) <> 'time_'`
    : sql``;
  return sql`((${e}.kind not in ('link_added', 'link_removed') or ${visibleTicketRef(sql, p, ref(sql, alias, 'otherId'))})
    and (${e}.kind <> 'parent_changed' or ${visibleTicketRef(sql, p, ref(sql, alias, 'old'))} or ${visibleTicketRef(sql, p, ref(sql, alias, 'new'))})
    ${clientOnly})`;
}

/** The event kinds whose payload `eventPayload` changes for the principal; every other kind's payload is the stored one. */
export const PRINCIPAL_PAYLOAD_KINDS = ['parent_changed', 'moved'];

/**
 * The payload of event row `alias` as the principal may read it (jsonb): a parent the caller may
 * not name becomes null (as `links.parent` on the page), and a move names only the projects
 * (and the human ids in them) the caller may see.
 */
export function eventPayload(sql: Db, p: Principal, alias = 'e'): Fragment {
  // the kinds named here are PRINCIPAL_PAYLOAD_KINDS: every other event's payload is the same for everyone
  const e = sql(alias);
  const keepIf = (cond: Fragment, key: string): Fragment => sql`case when ${cond} then ${e}.payload->${key} else 'null'::jsonb end`;
  const parent = (key: string): Fragment => keepIf(visibleTicketRef(sql, p, ref(sql, alias, key)), key);
  const project = (side: 'from' | 'to'): Fragment => visibleProject(sql, p, ref(sql, alias, `${side}ProjectId`));
  return sql`case ${e}.kind
    when 'parent_changed' then ${e}.payload || jsonb_build_object('old', ${parent('old')}, 'new', ${parent('new')})
    when 'moved' then ${e}.payload || jsonb_build_object(
      'fromProjectId', ${keepIf(project('from'), 'fromProjectId')}, 'fromHumanId', ${keepIf(project('from'), 'fromHumanId')},
      'toProjectId', ${keepIf(project('to'), 'toProjectId')}, 'toHumanId', ${keepIf(project('to'), 'toHumanId')})
    else ${e}.payload end`;
}

import type { Db } from '../../db/connect.ts';
import type { Principal } from '../auth/principal.ts';
import { eventPayload, PRINCIPAL_PAYLOAD_KINDS, visibleEvent } from '../access/events.ts';
import { visibleTicket } from '../access/visible.ts';
import { effectiveBillingModeSql, effectiveBillingPolicySql } from './filters.ts';
import { readableAudiences } from '../access/permissions.ts';
import { MARKDOWN_VERSION } from './markdown.ts';
import { humanIdSql, isoSql, personNameSql, type Fragment } from './summary.ts';

/**
 * The sections of a TicketPage as SQL expressions over ticket row `t`, each a correlated json
 * aggregate, so the whole page is one statement however many
 * comments, events or children the ticket has.
 */

const personOrNull = (sql: Db, alias: string) => {
  const i = sql(alias);
  return sql`case when ${i}.id is null then null else json_build_object('id', ${i}.id, 'name', ${personNameSql(sql, sql`t.workspace_id`, alias)}) end`;
};

/** `'id', .., 'humanId', .., 'title', .., 'state', {..}` of ticket row `alias`, to splice into json_build_object. */
function refPairs(sql: Db, alias: string): Fragment {
  const o = sql(alias);
  return sql`'id', ${o}.id, 'humanId', ${humanIdSql(sql, alias)}, 'title', ${o}.title,
    'state', (select json_build_object('id', rs.id, 'key', rs.key, 'name', rs.name, 'category', rs.category)
              from workflow_states rs where rs.id = ${o}.state_id)`;
}

/**
 * Separators of the text forms below: PostgreSQL's json escapes every control character inside
 * strings and writes none outside them, so these two never occur in the JSON text they join.
 */
export const PART = '\x1f';
export const ITEM = '\x1e';

/** A viewer's object, its order and its rows: the ticket_viewers rows plus the reporter, who is always a viewer (isReporter). */
function viewerParts(sql: Db) {
  return {
    object: sql`json_build_object(
             'identityId', vi.id, 'name', ${personNameSql(sql, sql`t.workspace_id`, 'vi')}, 'email', vi.email,
             'kind', case when vi.kind = 'agent' or vm.role = 'agent' then 'agent'
                          -- a sender known only from email (no membership) is outside the workspace: a client person
                          when vm.role is null or vm.role in ('client', 'client_elevated') then 'client' else 'workspace' end,
             'clientName', vc.name, 'addedBy', ${personOrNull(sql, 'va')}, 'isReporter', vi.id is not distinct from t.reporter_id)`,
    order: sql`(vi.id is not distinct from t.reporter_id) desc, vv.created_at, vi.id`,
    from: sql`(select v.identity_id, v.added_by, v.created_at from ticket_viewers v where v.ticket_id = t.id
          union all
          select t.reporter_id, null::uuid, t.created_at
          where t.reporter_id is not null
            and not exists (select 1 from ticket_viewers v2 where v2.ticket_id = t.id and v2.identity_id = t.reporter_id)) vv
    join identities vi on vi.id = vv.identity_id
    left join memberships vm on vm.workspace_id = t.workspace_id and vm.identity_id = vi.id
    left join clients vc on vc.id = vm.client_id
    left join identities va on va.id = vv.added_by`,
  };
}

/** Viewers without canRemove (a rule computed in JS), as a json array; the reporter is never removable. */
export function viewersSql(sql: Db): Fragment {
  const v = viewerParts(sql);
  return sql`coalesce((select json_agg(${v.object} order by ${v.order}) from ${v.from}), '[]'::json)`;
}

/**
 * The same viewers as text for the page's text form: each viewer's JSON object, PART, its
 * identity id; viewers joined by ITEM; '' when none. The web process adds canRemove to each
 * object without parsing it.
 */
export function viewersTextSql(sql: Db): Fragment {
  const v = viewerParts(sql);
  return sql`coalesce((select string_agg(${v.object}::text || chr(31) || vi.id::text, chr(30) order by ${v.order}) from ${v.from}), '')`;
}

/**
 * Billing for workspace users. rollupEstimateMinutes: for a leaf, its own estimate; for a
 * parent, the sum of the estimates of its visible leaf descendants (descendants without
 * visible children), walked recursively (depth-capped against a corrupt cycle).
 */
export function billingSql(sql: Db, p: Principal): Fragment {
  const rollup = sql`(
    with recursive d(id, depth) as (
      select c.id, 1 from tickets c where c.parent_id = t.id and ${visibleTicket(sql, p, 'c')}
      union
      select c.id, d.depth + 1 from tickets c join d on c.parent_id = d.id where d.depth < 20 and ${visibleTicket(sql, p, 'c')}
    )
    select case when not exists (select 1 from d) then t.estimate_minutes
                else (select sum(x.estimate_minutes)::int from tickets x
                      where x.id in (select d.id from d)
                        and not exists (select 1 from tickets g where g.parent_id = x.id and ${visibleTicket(sql, p, 'g')})) end)`;
  return sql`json_build_object(
    'billingClient', (select json_build_object('id', b.id, 'name', b.name) from clients b where b.id = t.billing_client_id),
    'billingPolicy', t.billing_policy,
    'effectiveBillingPolicy', ${effectiveBillingPolicySql(sql, 't')},
    'billingMode', t.billing_mode,
    'effectiveBillingMode', ${effectiveBillingModeSql(sql, 't')},
    'billingDescription', t.billing_description,
    'estimateMinutes', t.estimate_minutes,
    'rollupEstimateMinutes', ${rollup})`;
}

/** The latest comments only, each body cut to a length (an assistant's view of a long thread). */
export interface CommentWindow {
  latestComments: number;
  commentChars: number;
}

/**
 * `html` (stored beside its Markdown, sql/110) when the current renderer made it, else SQL null:
 * the reader renders those (`renderMarkdown`), so a row no writer rendered is still answered right.
 */
export function storedHtmlSql(sql: Db, html: Fragment, version: Fragment): Fragment {
  return sql`case when ${version} = ${MARKDOWN_VERSION}::int then ${html} end`;
}

/**
 * The comments of the audiences the caller may read, oldest first, as a lateral subquery `page_comments` of
 * one row: `comments`, their json array, and `unrendered`, whether some comment's bodyHtml is null
 * (not stored by the current renderer: the reader renders it). With a window, only the latest
 * `latestComments`, bodies longer than `commentChars` cut and ended by "…", and every bodyHtml left
 * to the reader (it is the HTML of the cut body).
 */
export function commentsLateral(sql: Db, p: Principal, window: CommentWindow | null = null): Fragment {
  const body = window
    ? sql`case when length(c.body) > ${window.commentChars}::int then left(c.body, ${window.commentChars}::int) || '…' else c.body end`
    : sql`c.body`;
  const html = window ? sql`null::text` : storedHtmlSql(sql, sql`c.body_html`, sql`c.body_html_version`);
  const readable = sql`c.ticket_id = t.id and c.audience = any(${readableAudiences(p)}::text[])`;
  // Without a window the page's statement stays exactly what it was before windows existed.
  const rows = window
    ? sql`(select * from comments c where ${readable} order by c.created_at desc, c.id desc limit ${window.latestComments}::int) c`
    : sql`comments c`;
  const where = window ? sql`` : sql`where ${readable}`;
  return sql`lateral (
    select coalesce(json_agg(json_build_object(
             'id', c.id, 'body', ${body}, 'bodyHtml', ${html}, 'audience', c.audience,
             'author', case when ci.id is null then null else json_build_object('id', ci.id, 'name', ${personNameSql(sql, sql`c.workspace_id`, 'ci')}, 'clientName', cc.name) end,
             'source', c.source, 'createdAt', ${isoSql(sql, sql`c.created_at`)}, 'updatedAt', ${isoSql(sql, sql`c.updated_at`)},
             'edited', c.updated_at > c.created_at) order by c.created_at, c.id), '[]'::json) as comments,
           coalesce(bool_or(${html} is null), false) as unrendered
    from ${rows}
    left join identities ci on ci.id = c.author_id
    left join memberships cm on cm.workspace_id = c.workspace_id and cm.identity_id = c.author_id
    left join clients cc on cc.id = cm.client_id
    ${where}) page_comments`;
}

/**
 * The timeline, oldest first, as JSON text: the events `visibleEvent` allows (src/core/access/events.ts,
 * the rule the change feed shares), each from the text stored with it (sql/105): its head, the
 * actor's object (with the name the workspace shows now) and its tail, which for
 * PRINCIPAL_PAYLOAD_KINDS is made again from the payload `eventPayload` allows. The actor is a
 * lateral look-up by the event's own actor_id: the planner may cache it per person (Memoize), and
 * its cost stays one look-up per event whatever plan it picks. (A join to "the persons of this
 * timeline" was planned, on fresh statistics that gave the ticket one event, as a nested loop that
 * ran that subquery again for every event: a quadratic 540 ms for 303 events under the load mix.)
 */
export function eventsSql(sql: Db, p: Principal): Fragment {
  return sql`coalesce((
    select '[' || string_agg(
             e.json_head || coalesce(ea.json, 'null') ||
             case when e.kind = any(${PRINCIPAL_PAYLOAD_KINDS}::text[])
                  then ticket_event_json_tail(e.subject, ${eventPayload(sql, p, 'e')}, e.created_at) else e.json_tail end,
             ',' order by e.created_at, e.seq) || ']'
    from ticket_events e
    left join lateral (select ${personOrNull(sql, 'ei')}::text as json from identities ei where ei.id = e.actor_id) ea on true
    where e.ticket_id = t.id and ${visibleEvent(sql, p, 'e')}), '[]')`;
}

/** Attachment metadata (never the bytes) of readable audiences, on readable comments. */
export function attachmentsSql(sql: Db, p: Principal): Fragment {
  const aud = readableAudiences(p);
  return sql`coalesce((
    select json_agg(json_build_object(
             'id', a.id, 'filename', a.filename, 'contentType', a.content_type, 'size', a.size, 'inline', a.inline,
             'audience', a.audience, 'commentId', a.comment_id, 'uploadedBy', ${personOrNull(sql, 'au')},
             'createdAt', ${isoSql(sql, sql`a.created_at`)})
           order by a.created_at, a.id)
    from attachments a
    left join identities au on au.id = a.uploaded_by
    where a.ticket_id = t.id and a.audience = any(${aud}::text[])
      and (a.comment_id is null or exists (select 1 from comments ac where ac.id = a.comment_id and ac.audience = any(${aud}::text[])))),
    '[]'::json)`;
}

/** A list of linked tickets of one kind and direction(s), visible ones only, oldest link first. */
function linkList(sql: Db, p: Principal, kind: string, dir: 'out' | 'in' | 'both', withDirection = false): Fragment {
  const other = dir === 'out' ? sql`l.target_id` : dir === 'in' ? sql`l.source_id` : sql`case when l.source_id = t.id then l.target_id else l.source_id end`;
  const mine = dir === 'out' ? sql`l.source_id = t.id` : dir === 'in' ? sql`l.target_id = t.id` : sql`(l.source_id = t.id or l.target_id = t.id)`;
  const direction = withDirection ? sql`, 'direction', case when l.source_id = t.id then 'outgoing' else 'incoming' end` : sql``;
  return sql`coalesce((
    select json_agg(json_build_object(${refPairs(sql, 'o')}, 'linkId', l.id ${direction}) order by l.created_at, l.id)
    from ticket_links l join tickets o on o.id = ${other}
    where ${mine} and l.kind = ${kind} and ${visibleTicket(sql, p, 'o')}), '[]'::json)`;
}

/** parent, children, blocks, blockedBy, relates, duplicates: only tickets the caller can see. */
export function linksSql(sql: Db, p: Principal): Fragment {
  return sql`json_build_object(
    'parent', (select json_build_object(${refPairs(sql, 'lp')}) from tickets lp where lp.id = t.parent_id and ${visibleTicket(sql, p, 'lp')}),
    'children', coalesce((select json_agg(json_build_object(${refPairs(sql, 'lc')}) order by lc.created_at, lc.id)
                          from tickets lc where lc.parent_id = t.id and ${visibleTicket(sql, p, 'lc')}), '[]'::json),
    'blocks', ${linkList(sql, p, 'blocks', 'out')},
    'blockedBy', ${linkList(sql, p, 'blocks', 'in')},
    'relates', ${linkList(sql, p, 'relates', 'both')},
    'duplicates', ${linkList(sql, p, 'duplicates', 'both', true)})`;
}

/** Code-host references, newest first. */
export function codehostSql(sql: Db): Fragment {
  return sql`coalesce((
    select json_agg(json_build_object('id', h.id, 'repo', h.repo, 'sha', h.sha, 'pr', h.pr, 'url', h.url,
                                      'createdAt', ${isoSql(sql, sql`h.created_at`)})
           order by h.created_at desc, h.id desc)
    from codehost_links h where h.ticket_id = t.id), '[]'::json)`;
}

import { ticketRuleHolds } from '../access/authorize.ts';
import { visibleTicket } from '../access/visible.ts';
import { isClientRole } from '../auth/principal.ts';
import type { Ctx } from '../ctx.ts';
import { notFound } from '../errors.ts';
import { loadTicket } from './load.ts';
import { renderMarkdown } from './markdown.ts';
import {
  attachmentsSql,
  billingSql,
  codehostSql,
  commentsSql,
  commentsTextSql,
  eventsSql,
  ITEM,
  linksSql,
  PART,
  viewersSql,
  viewersTextSql,
  type CommentWindow,
} from './page-sql.ts';
import { ticketPageTime, type TicketTime } from './page-time.ts';
import { ticketPermissions, type TicketPermissions } from '../access/permissions.ts';
import { isoSql, summaryJoins, summaryJson, summaryText, type TicketSummary } from './summary.ts';
import { jsonText, type JsonPart, type JsonText } from '../json-text.ts';
import { byteRows, textOf } from '../../db/raw.ts';
import type { Attachment } from '../attachments/present.ts';
import type { CodehostLink } from '../codehost/present.ts';
import type { Comment } from '../comments/present.ts';
import type { TicketFacts } from '../access/facts.ts';

export interface TicketRefSummary {
  id: string;
  humanId: string;
  title: string;
  state: { id: string; key: string; name: string; category: 'open' | 'closed' };
}

export interface LinkedTicket extends TicketRefSummary {
  linkId: string;
}

export interface TicketLinks {
  parent: TicketRefSummary | null;
  children: TicketRefSummary[];
  blocks: LinkedTicket[];
  blockedBy: LinkedTicket[];
  relates: LinkedTicket[];
  /** Links of kind `duplicates` in either direction; `outgoing`: this ticket duplicates the other. */
  duplicates: (LinkedTicket & { direction: 'outgoing' | 'incoming' })[];
}

export interface Viewer {
  identityId: string;
  name: string;
  email: string | null;
  kind: 'workspace' | 'agent' | 'client';
  clientName: string | null;
  addedBy: { id: string; name: string } | null;
  isReporter: boolean;
  canRemove: boolean;
}

export interface TicketBilling {
  billingClient: { id: string; name: string } | null;
  /** The ticket's own policy; null inherits. */
  billingPolicy: string | null;
  effectiveBillingPolicy: string;
  billingMode: 'period' | 'on_close' | null;
  effectiveBillingMode: 'period' | 'on_close';
  billingDescription: string | null;
  estimateMinutes: number | null;
  rollupEstimateMinutes: number | null;
}

export interface TicketEvent {
  id: string;
  kind: string;
  actor: { id: string; name: string } | null;
  subject: string | null;
  payload: Record<string, unknown>;
  createdAt: string;
}

/** The contract's TicketPage. `billing` is absent (not null) for client users. */
export interface TicketPage extends TicketSummary {
  description: string;
  descriptionHtml: string;
  source: 'ui' | 'email' | 'api' | 'mcp' | 'codehost';
  startedBy: 'workspace' | 'client' | 'email';
  archived: boolean;
  closedAt: string | null;
  viewers: Viewer[];
  billing?: TicketBilling;
  comments: Comment[];
  events: TicketEvent[];
  attachments: Attachment[];
  links: TicketLinks;
  time: TicketTime | null;
  codehost: CodehostLink[];
  permissions: TicketPermissions;
  /** Only with the `comments` window of TicketPageOptions: readable comments left out of `comments`. */
  commentsOmitted?: number;
}

/** How much of the page to build. REST asks for the whole page; an assistant, for the latest comments. */
export interface TicketPageOptions {
  /** Only the latest comments, bodies cut; `commentsOmitted` says how many were left out. */
  comments?: CommentWindow | null;
}

interface PageRow {
  summary: TicketSummary;
  description: string;
  source: TicketPage['source'];
  startedBy: TicketPage['startedBy'];
  archived: boolean;
  closedAt: string | null;
  viewers: Omit<Viewer, 'canRemove'>[];
  billing: TicketBilling | null;
  comments: Omit<Comment, 'bodyHtml'>[];
  events: TicketEvent[];
  attachments: Attachment[];
  links: TicketLinks;
  codehost: CodehostLink[];
}

/**
 * The page of a ticket already loaded (and so known visible) as `facts`: one statement for
 * everything but `time`, whatever the number of comments, events, children or links.
 */
export async function buildTicketPage(ctx: Ctx, facts: TicketFacts, opts: TicketPageOptions = {}): Promise<TicketPage> {
  const { sql, principal: p } = ctx;
  const window = opts.comments ?? null;
  const client = isClientRole(p.role);
  const [row] = await sql<PageRow[]>`
    select ${summaryJson(sql, p)} as summary,
           t.description, t.source, t.started_by as "startedBy", t.archived,
           to_char(t.closed_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') as "closedAt",
           ${viewersSql(sql)} as viewers,
           ${client ? sql`null::json` : billingSql(sql, p)} as billing,
           ${commentsSql(sql, p, window)} as comments,
           ${eventsSql(sql, p)}::json as events,
           ${attachmentsSql(sql, p)} as attachments,
           ${linksSql(sql, p)} as links,
           ${codehostSql(sql)} as codehost
    from tickets t
    ${summaryJoins(sql)}
    where t.id = ${facts.id} and ${visibleTicket(sql, p)}`;
  if (!row) throw notFound(undefined, undefined, 'No such ticket.');
  const permissions = ticketPermissions(p, facts);
  const time = await ticketPageTime(ctx, facts);
  return {
    ...row.summary,
    description: row.description,
    descriptionHtml: renderMarkdown(row.description),
    source: row.source,
    startedBy: row.startedBy,
    archived: row.archived,
    closedAt: row.closedAt,
    viewers: row.viewers.map((v) => ({ ...v, canRemove: ticketRuleHolds(p, 'viewers.remove', facts, permissions, { viewer: v.identityId }) })),
    ...(client || !row.billing ? {} : { billing: row.billing }),
    comments: row.comments.map(({ body, ...c }) => ({
      id: c.id,
      body,
      bodyHtml: renderMarkdown(body),
      audience: c.audience,
      author: c.author,
      source: c.source,
      createdAt: c.createdAt,
      updatedAt: c.updatedAt,
      edited: c.edited,
    })),
    events: row.events,
    attachments: row.attachments,
    links: row.links,
    time,
    codehost: row.codehost,
    permissions,
    // commentCount counts the same readable comments, in the same statement
    ...(window ? { commentsOmitted: Math.max(0, row.summary.commentCount - row.comments.length) } : {}),
  };
}

/** The page's columns: those the process reads decoded, the rest as the bytes PostgreSQL sent (db/raw.ts). */
type PageTextColumn =
  | 'id'
  | 'updatedAt'
  | 'summary'
  | 'description'
  | 'source'
  | 'startedBy'
  | 'archived'
  | 'closedAt'
  | 'viewers'
  | 'billing'
  | 'comments'
  | 'events'
  | 'attachments'
  | 'links'
  | 'codehost';

/** The whole page as JSON text, with what its ETag is computed from (the page's own id and updatedAt). */
export interface TicketPageText {
  id: string;
  updatedAt: string;
  page: JsonText;
}

/**
 * The same page as `buildTicketPage` (every comment in full) as JSON text for the REST door: the
 * parts PostgreSQL builds (summary, events, attachments, links, codehost, billing, each comment and
 * viewer object) are passed through unparsed; the web process adds what needs its rules, each beside
 * the text it belongs to: descriptionHtml and each comment's bodyHtml (renderMarkdown, sanitised,
 * cached by source), each viewer's canRemove, time and permissions. The keys come in the object
 * form's order. Same statement shape as the object form, its json columns read as the bytes PostgreSQL
 * sent (db/raw.ts) and joined with the rest as bytes (core/json-text.ts).
 */
export async function buildTicketPageText(ctx: Ctx, facts: TicketFacts): Promise<TicketPageText> {
  const { sql, principal: p } = ctx;
  const client = isClientRole(p.role);
  const [row] = await byteRows<PageTextColumn>(sql`
    select t.id, ${isoSql(sql, sql`t.updated_at`)} as "updatedAt", ${summaryText(sql, p)} as summary,
           t.description, t.source, t.started_by as "startedBy", t.archived,
           to_char(t.closed_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') as "closedAt",
           ${viewersTextSql(sql)} as viewers,
           ${client ? sql`null::text` : sql`${billingSql(sql, p)}::text`} as billing,
           ${commentsTextSql(sql, p)} as comments,
           ${eventsSql(sql, p)} as events,
           ${attachmentsSql(sql, p)}::text as attachments,
           ${linksSql(sql, p)}::text as links,
           ${codehostSql(sql)}::text as codehost
    from tickets t
    ${summaryJoins(sql)}
    where t.id = ${facts.id} and ${visibleTicket(sql, p)}`);
  if (!row) throw notFound(undefined, undefined, 'No such ticket.');
  const permissions = ticketPermissions(p, facts);
  const time = await ticketPageTime(ctx, facts);
  const viewers = splitItems(textOf(row.viewers)!).map((v) => {
    const [object, identityId] = v.split(PART) as [string, string];
    const canRemove = ticketRuleHolds(p, 'viewers.remove', facts, permissions, { viewer: identityId });
    return `${object.slice(0, -1)},"canRemove":${canRemove}}`;
  });
  const comments = splitItems(textOf(row.comments)!).map((c) => {
    const [head, rest] = c.split(PART) as [string, string];
    const { body } = JSON.parse(head) as { body: string };
    return `${head.slice(0, -1)},"bodyHtml":${JSON.stringify(renderMarkdown(body))},${rest.slice(1)}`;
  });
  const str = JSON.stringify;
  const description = textOf(row.description)!;
  // the summary is one json object: its closing brace is its last byte
  const parts: JsonPart[] = [
    row.summary!.subarray(0, -1),
    `,"description":${str(description)},"descriptionHtml":${str(renderMarkdown(description))}` +
      `,"source":${str(textOf(row.source))},"startedBy":${str(textOf(row.startedBy))},"archived":${textOf(row.archived) === 't'}` +
      `,"closedAt":${str(textOf(row.closedAt))},"viewers":[${viewers.join(',')}]`,
    ...(client || row.billing === null ? [] : [',"billing":', row.billing]),
    `,"comments":[${comments.join(',')}],"events":`,
    row.events!,
    ',"attachments":',
    row.attachments!,
    ',"links":',
    row.links!,
    `,"time":${str(time)},"codehost":`,
    row.codehost!,
    `,"permissions":${str(permissions)}}`,
  ];
  return { id: textOf(row.id)!, updatedAt: textOf(row.updatedAt)!, page: jsonText(parts) };
}

const splitItems = (joined: string): string[] => (joined === '' ? [] : joined.split(ITEM));

/** GET /tickets/{ref}: the full page of a visible ticket; unknown or invisible is 404 `not_found`. */
export async function getTicketPage(ctx: Ctx, ref: string, opts: TicketPageOptions = {}): Promise<TicketPage> {
  return buildTicketPage(ctx, await loadTicket(ctx, ref), opts);
}

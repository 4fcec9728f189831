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
  commentsLateral,
  eventsSql,
  ITEM,
  linksSql,
  PART,
  storedHtmlSql,
  viewersSql,
  viewersTextSql,
  type CommentWindow,
} from './page-sql.ts';
import { ticketTimeSql, type TicketTime } from '../time/ticket-time.ts';
import { ticketPermissions, type TicketPermissions } from '../access/permissions.ts';
import { isoSql, summaryJoins, summaryJson, summaryText, type TicketSummary } from './summary.ts';
import { jsonText, type JsonPart, type JsonText } from '../json-text.ts';
import { byteRows, textOf } from '../../db/raw.ts';
import { StatementShapes } from '../../db/statement-shapes.ts';
import { callerKey } from '../reads/remembered.ts';
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
  descriptionHtml: string | null;
  source: TicketPage['source'];
  startedBy: TicketPage['startedBy'];
  archived: boolean;
  closedAt: string | null;
  viewers: Omit<Viewer, 'canRemove'>[];
  billing: TicketBilling | null;
  comments: (Omit<Comment, 'bodyHtml'> & { bodyHtml: string | null })[];
  events: TicketEvent[];
  attachments: Attachment[];
  links: TicketLinks;
  time: TicketTime | null;
  codehost: CodehostLink[];
}

/** The description's stored HTML, null when the current renderer did not make it (the reader renders it). */
const descriptionHtmlSql = (sql: Ctx['sql']) => storedHtmlSql(sql, sql`t.description_html`, sql`t.description_html_version`);

/**
 * The page of a ticket already loaded (and so known visible) as `facts`: one statement, whatever
 * the number of comments, events, children or links.
 */
export async function buildTicketPage(ctx: Ctx, facts: TicketFacts, opts: TicketPageOptions = {}): Promise<TicketPage> {
  const { sql, principal: p } = ctx;
  const window = opts.comments ?? null;
  const client = isClientRole(p.role);
  const [row] = await sql<PageRow[]>`
    select ${summaryJson(sql, p)} as summary,
           t.description, ${descriptionHtmlSql(sql)} as "descriptionHtml", t.source, t.started_by as "startedBy", t.archived,
           to_char(t.closed_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') as "closedAt",
           ${viewersSql(sql)} as viewers,
           ${client ? sql`null::json` : billingSql(sql, p)} as billing,
           page_comments.comments,
           ${eventsSql(sql, p)}::json as events,
           ${attachmentsSql(sql, p)} as attachments,
           ${linksSql(sql, p)} as links,
           ${ticketTimeSql(ctx, sql`t.id`, facts)} as time,
           ${codehostSql(sql)} as codehost
    from tickets t
    ${summaryJoins(sql)}
    left join ${commentsLateral(sql, p, window)} on true
    where t.id = ${facts.id} and ${visibleTicket(sql, p)}`;
  if (!row) throw notFound(undefined, undefined, 'No such ticket.');
  const permissions = ticketPermissions(p, facts);
  return {
    ...row.summary,
    description: row.description,
    descriptionHtml: row.descriptionHtml ?? renderMarkdown(row.description),
    source: row.source,
    startedBy: row.startedBy,
    archived: row.archived,
    closedAt: row.closedAt,
    viewers: row.viewers.map((v) => ({ ...v, canRemove: ticketRuleHolds(p, 'viewers.remove', facts, permissions, { viewer: v.identityId }) })),
    ...(client || !row.billing ? {} : { billing: row.billing }),
    comments: row.comments.map(({ body, bodyHtml, ...c }) => ({
      id: c.id,
      body,
      bodyHtml: bodyHtml ?? renderMarkdown(body),
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
    time: row.time,
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
  | 'descriptionHtml'
  | 'source'
  | 'startedBy'
  | 'archived'
  | 'closedAt'
  | 'viewers'
  | 'billing'
  | 'comments'
  | 'unrendered'
  | 'events'
  | 'attachments'
  | 'links'
  | 'time'
  | 'codehost';

/** The text form's statement, built once per shape (its key names everything but the ticket's id it reads). */
const pageStatements = new StatementShapes();

/** The whole page as JSON text, with what its ETag is computed from (the page's own id and updatedAt). */
export interface TicketPageText {
  id: string;
  updatedAt: string;
  page: JsonText;
}

/**
 * The same page as `buildTicketPage` (every comment in full) as JSON text for the REST door: the
 * parts PostgreSQL builds (summary, comments with their stored HTML, events, attachments, links,
 * time, codehost, billing, each viewer object) are passed through unparsed; the web process adds
 * what needs its rules, each beside the text it belongs to: each viewer's canRemove and the
 * permissions, and renders what no writer stored (descriptionHtml, bodyHtml: `storedHtmlSql`). The
 * keys come in the object form's order. Same statement shape as the object form, its json columns
 * read as the bytes PostgreSQL sent (db/raw.ts) and joined with the rest as bytes (core/json-text.ts).
 */
export async function buildTicketPageText(ctx: Ctx, facts: TicketFacts): Promise<TicketPageText> {
  const { sql, principal: p } = ctx;
  const client = isClientRole(p.role);
  // built once per caller's rights (and whether time shows), the ticket's id put in (db/statement-shapes.ts)
  const shapeKey = `${callerKey(p)}|${facts.clientOnProject}`;
  const [row] = await pageStatements.run(
    sql,
    shapeKey,
    { ticketId: facts.id },
    ({ ticketId }) => sql`
    select t.id, ${isoSql(sql, sql`t.updated_at`)} as "updatedAt", ${summaryText(sql, p)} as summary,
           t.description, ${descriptionHtmlSql(sql)} as "descriptionHtml", t.source, t.started_by as "startedBy", t.archived,
           to_char(t.closed_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') as "closedAt",
           ${viewersTextSql(sql)} as viewers,
           ${client ? sql`null::text` : sql`${billingSql(sql, p)}::text`} as billing,
           page_comments.comments::text as comments, page_comments.unrendered,
           ${eventsSql(sql, p)} as events,
           ${attachmentsSql(sql, p)}::text as attachments,
           ${linksSql(sql, p)}::text as links,
           coalesce(${ticketTimeSql(ctx, sql`t.id`, facts)}::text, 'null') as time,
           ${codehostSql(sql)}::text as codehost
    from tickets t
    ${summaryJoins(sql)}
    left join ${commentsLateral(sql, p)} on true
    where t.id = ${ticketId} and ${visibleTicket(sql, p)}`,
    byteRows<PageTextColumn>,
  );
  if (!row) throw notFound(undefined, undefined, 'No such ticket.');
  const permissions = ticketPermissions(p, facts);
  const viewers = splitItems(textOf(row.viewers)!).map((v) => {
    const [object, identityId] = v.split(PART) as [string, string];
    const canRemove = ticketRuleHolds(p, 'viewers.remove', facts, permissions, { viewer: identityId });
    return `${object.slice(0, -1)},"canRemove":${canRemove}}`;
  });
  const str = JSON.stringify;
  const description = textOf(row.description)!;
  // the summary is one json object: its closing brace is its last byte
  const parts: JsonPart[] = [
    row.summary!.subarray(0, -1),
    `,"description":${str(description)},"descriptionHtml":${str(textOf(row.descriptionHtml) ?? renderMarkdown(description))}` +
      `,"source":${str(textOf(row.source))},"startedBy":${str(textOf(row.startedBy))},"archived":${textOf(row.archived) === 't'}` +
      `,"closedAt":${str(textOf(row.closedAt))},"viewers":[${viewers.join(',')}]`,
    ...(client || row.billing === null ? [] : [',"billing":', row.billing]),
    ',"comments":',
    textOf(row.unrendered) === 't' ? renderComments(row.comments!) : row.comments!,
    ',"events":',
    row.events!,
    ',"attachments":',
    row.attachments!,
    ',"links":',
    row.links!,
    ',"time":',
    row.time!,
    ',"codehost":',
    row.codehost!,
    `,"permissions":${str(permissions)}}`,
  ];
  return { id: textOf(row.id)!, updatedAt: textOf(row.updatedAt)!, page: jsonText(parts) };
}

const splitItems = (joined: string): string[] => (joined === '' ? [] : joined.split(ITEM));

/** The page's comments (a json array) with every bodyHtml no writer stored rendered here (the slow way: read and written again). */
function renderComments(json: Buffer): string {
  const comments = JSON.parse(json.toString('utf8')) as { body: string; bodyHtml: string | null }[];
  for (const c of comments) c.bodyHtml ??= renderMarkdown(c.body);
  return JSON.stringify(comments);
}

/** GET /tickets/{ref}: the full page of a visible ticket; unknown or invisible is 404 `not_found`. */
export async function getTicketPage(ctx: Ctx, ref: string, opts: TicketPageOptions = {}): Promise<TicketPage> {
  return buildTicketPage(ctx, await loadTicket(ctx, ref), opts);
}

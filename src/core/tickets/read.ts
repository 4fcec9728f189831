import { z } from 'zod';
import { MAX_COMMENT_LENGTH } from '../comments/create.ts';
import { COMMENT_PAGE_MAX } from '../comments/list.ts';
import { defineOp } from '../operation.ts';
import { etagMatches, ticketEtag } from './etag.ts';
import { buildTicketPage, buildTicketPageText, type TicketPage } from './get.ts';
import type { Ctx } from '../ctx.ts';
import { jsonText, type JsonText } from '../json-text.ts';
import { remembering } from '../reads/remembered.ts';
import { loadTicket } from './load.ts';
import type { TicketFacts } from '../access/facts.ts';
import { ticketPageSchema } from './page-schema.ts';
import { ticketRef } from './schemas.ts';
import type { Fragment } from './summary.ts';

export type TicketPageRead = { status: 200; etag: string; page: TicketPage } | { status: 304; etag: string };

export const readTicketInput = z.object({
  ref: ticketRef,
  ifNoneMatch: z.string().nullish().describe('The ETag the caller holds (REST: If-None-Match): when current, the answer is 304 without the page.'),
  comments: z
    .object({
      latestComments: z.int().min(1).max(COMMENT_PAGE_MAX).describe('How many of the latest readable comments to include.'),
      commentChars: z.int().min(1).max(MAX_COMMENT_LENGTH).describe('Each body cut to this many characters, ending in "…".'),
    })
    .nullish()
    .describe('Only the latest comments, bodies cut, and `commentsOmitted` (an assistant); absent: every comment in full.'),
});

/** The read's result: the page with its ETag, or only the ETag when the caller's is current (REST: 304). */
export const ticketPageReadSchema = z.discriminatedUnion('status', [
  z.object({ status: z.literal(200), etag: z.string(), page: ticketPageSchema }),
  z.object({ status: z.literal(304), etag: z.string() }),
]);

/**
 * GET /tickets/{ref} with its ETag. When `ifNoneMatch` names the current version the page is
 * not built at all and the answer is 304: cheap for pollers. A read: no transaction. Remembered
 * as the REST door's text form is (`rememberedPage`), per comment limits: an assistant reading the
 * same ticket again (MCP get_ticket) costs one small statement and the page's JSON read back.
 */
export const readTicketPage = defineOp({
  name: 'tickets.read',
  action: 'tickets.read',
  input: readTicketInput,
  output: ticketPageReadSchema,
  run: async (ctx, { ref, ifNoneMatch, comments }): Promise<TicketPageRead> => {
    // a page built by this call is answered as it is; one from memory is read back from its bytes
    let built: TicketPage | undefined;
    const read = await rememberedPage(ctx, 'tickets.page.object', { ref, comments }, ifNoneMatch, async (facts) => {
      built = await buildTicketPage(ctx, facts, { comments });
      return { body: Buffer.from(JSON.stringify(built), 'utf8'), tag: ticketEtag(built) };
    });
    if (read.status === 304) return read;
    return { status: 200, etag: read.etag, page: built ?? (JSON.parse(read.body.toString('utf8')) as TicketPage) };
  },
});

export type TicketPageTextRead = { status: 200; etag: string; page: JsonText } | { status: 304; etag: string };

/**
 * GET /tickets/{ref} as the REST door sends it: `readTicketPage` with every comment in full, the
 * page as JSON text (buildTicketPageText: PostgreSQL's JSON passed through, not parsed and written
 * again). Same action, same ETag and 304, same answer once parsed.
 */
export const readTicketPageJson = defineOp({
  name: 'tickets.read.json',
  action: 'tickets.read',
  input: readTicketInput.omit({ comments: true }),
  output: ticketPageReadSchema,
  run: async (ctx, { ref, ifNoneMatch }): Promise<TicketPageTextRead> => {
    const read = await rememberedPage(ctx, 'tickets.page', { ref }, ifNoneMatch, async (facts) => {
      const { page, ...version } = await buildTicketPageText(ctx, facts);
      return { body: page.jsonText, tag: ticketEtag(version) };
    });
    return read.status === 304 ? read : { status: 200, etag: read.etag, page: jsonText(read.body) };
  },
});

/**
 * The page `build` makes of ticket `input.ref`'s facts, as bytes with its ETag, or a 304 when
 * `ifNoneMatch` is current. A page nothing it shows has changed on is answered from this process's
 * memory (reads/remembered.ts), as the list and the board are: keyed by the caller and `input`,
 * under the workspace's read mark, the global one and the ticket's own (sql/111_ticket_marks.sql:
 * its events, time, attachments, links and codehost links), selected by loadTicket, the page's
 * first statement, which is sent anyway: a remembered page costs that one statement, a page read
 * afresh the same two as without memory. A 304 builds no page.
 */
async function rememberedPage(
  ctx: Ctx,
  name: string,
  input: { ref: string; comments?: unknown },
  ifNoneMatch: string | null | undefined,
  build: (facts: TicketFacts) => Promise<{ body: Buffer; tag: string }>,
): Promise<{ status: 200; etag: string; body: Buffer } | { status: 304; etag: string }> {
  const memory = remembering(ctx, name, input, ticketMarkSql(ctx));
  const { readMark, ...facts } = await loadTicket(ctx, input.ref, { mark: memory?.markSql });
  const current = ticketEtag(facts);
  if (etagMatches(ifNoneMatch, current)) return { status: 304, etag: current };
  const hit = memory?.get(readMark);
  if (hit) return { status: 200, etag: hit.tag!, body: hit.body };
  const built = await build(facts);
  memory?.set(readMark, built);
  return { status: 200, etag: built.tag, body: built.body };
}

/**
 * The ticket's own mark (sql/111_ticket_marks.sql), as text; 0 before its first numbered change.
 * Over loadTicket's row `t`, the statement it is selected in.
 */
function ticketMarkSql(ctx: Ctx): Fragment {
  return ctx.sql`coalesce((select m.n from ticket_marks m where m.ticket_id = t.id), 0)::text`;
}

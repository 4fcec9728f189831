import type { Db } from '../../db/connect.ts';
import { MARKDOWN_VERSION, renderMarkdown } from './markdown.ts';

/** Rows rendered per statement pair (one read, one write). */
const BATCH = 500;

/** Where Markdown and its stored HTML live (sql/110): the table, its id, source, html and version columns. */
const STORES = [
  { table: 'comments', source: 'body', html: 'body_html', version: 'body_html_version', ticket: 'ticket_id' },
  { table: 'tickets', source: 'description', html: 'description_html', version: 'description_html_version', ticket: 'id' },
] as const;

/**
 * Renders the stored HTML (sql/110) of rows no writer rendered with the current renderer: rows
 * from before the migration, from a writer that does not render (a seed, a script), or from an
 * older MARKDOWN_VERSION. Each batch reads up to 500 rows, renders them here and writes each HTML
 * only where the source is still the one rendered (a body edited meanwhile keeps its null, and
 * the next pass takes it). Until then a reader renders such a row itself: this only makes pages
 * faster, never righter. Stops after `maxRows` (a crontab tick's share) or when none is left;
 * `ticketIds` narrows it to those tickets' descriptions and comments. Returns the rows written.
 */
export async function refreshStoredHtml(sql: Db, opts: { maxRows?: number; ticketIds?: string[] } = {}): Promise<number> {
  const maxRows = opts.maxRows ?? 10_000;
  let done = 0;
  for (const s of STORES) {
    for (;;) {
      const limit = Math.min(BATCH, maxRows - done);
      if (limit <= 0) return done;
      // versions only grow, so "older or none" is two ranges of the version's index
      const rows = await sql<{ id: string; source: string }[]>`
        select id, ${sql(s.source)} as source from ${sql(s.table)}
        where (${sql(s.version)} is null or ${sql(s.version)} < ${MARKDOWN_VERSION}::int)
          ${opts.ticketIds ? sql`and ${sql(s.ticket)} = any(${opts.ticketIds}::uuid[])` : sql``}
        limit ${limit}`;
      if (rows.length === 0) break;
      const written = await sql`
        update ${sql(s.table)} x set ${sql(s.html)} = r.html, ${sql(s.version)} = ${MARKDOWN_VERSION}::int
        from unnest(${rows.map((r) => r.id)}::uuid[], ${rows.map((r) => r.source)}::text[], ${rows.map((r) => renderMarkdown(r.source))}::text[]) r(id, source, html)
        where x.id = r.id and x.${sql(s.source)} is not distinct from r.source`;
      done += written.count;
      // every row read was changed meanwhile: leave them to the next pass rather than read them again now
      if (written.count === 0) break;
    }
  }
  return done;
}

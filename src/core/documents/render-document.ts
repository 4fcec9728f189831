import { createHash } from 'node:crypto';
import { timesheetRendered } from '../billing/progress.ts';
import { jobTx, step, type JobCtx, type JobRefs } from '../jobs/ctx.ts';
import { loadTimesheet } from './load-timesheet.ts';
import { timesheetFooter } from './pdf-renderer.ts';
import { renderCsv } from './render/csv.ts';
import { renderHtml } from './render/html.ts';
import type { DocumentFormat, TimesheetModel } from './timesheet-model.ts';

/**
 * The `documents:render` job: writes one document (a timesheet in one format). Idempotent: a
 * document that exists is never written again (documents are immutable; the unique
 * (timesheet, format) key settles a race), so a retry after a crash at any step leaves the same
 * single row. The bytes are made outside the transaction (a pdf takes a browser), then written
 * with the run's progress in one transaction, under the run's row lock (serialised with a void).
 */
export async function renderDocument(ctx: JobCtx, { timesheetId, format }: { timesheetId: string; format: DocumentFormat }): Promise<JobRefs> {
  const written = () =>
    ctx.sql<{ documentId: string; runId: string }[]>`
      select id as "documentId", run_id as "runId" from documents where timesheet_id = ${timesheetId} and format = ${format}`;
  const [done] = await written();
  if (done) {
    await jobTx(ctx, (ctx) => timesheetRendered(ctx.sql, timesheetId, ctx.now()));
    return { timesheetId, ...done };
  }
  const model = await loadTimesheet(ctx.sql, timesheetId);
  if (!model) return { timesheetId };
  step(ctx, 'render:loaded');
  const bytes = await renderBytes(ctx, model, format);
  step(ctx, 'render:rendered');
  await jobTx(ctx, async (ctx) => {
    const { sql } = ctx;
    // The run's row lock, taken before the document is written: a void (which takes the same row
    // `for update`) either committed before, and the insert below reads the run as voided, or waits
    // for this transaction and then voids the document with the rest. Read in the insert alone,
    // the status could be a void's past while the void's own update missed the new row.
    await sql`
      select r.id from timesheets s join billing_runs r on r.id = s.run_id where s.id = ${timesheetId} for no key update of r`;
    await sql`select 1 from timesheets where id = ${timesheetId} for update`;
    await sql`
      insert into documents (workspace_id, run_id, client_id, project_id, scope, number, period_start, format, version, locale,
                             checksum, bytes, content, voided, timesheet_id, supersedes_id, created_at)
      select s.workspace_id, s.run_id, s.client_id, s.project_id, s.scope, s.number, p.period_start, ${format}, s.version, c.locale,
             ${createHash('sha256').update(bytes).digest('hex')}, ${bytes.length}, ${bytes}, r.status = 'voided', s.id,
             (select d.id from documents d where d.timesheet_id = s.supersedes_id and d.format = ${format}), ${ctx.now()}
      from timesheets s join billing_runs r on r.id = s.run_id join periods p on p.id = r.period_id join clients c on c.id = s.client_id
      where s.id = ${timesheetId}
      on conflict (timesheet_id, format) do nothing`;
    step(ctx, 'render:written');
    await timesheetRendered(sql, timesheetId, ctx.now());
  });
  return { timesheetId, ...(await written())[0] };
}

async function renderBytes(ctx: JobCtx, model: TimesheetModel, format: DocumentFormat): Promise<Buffer> {
  switch (format) {
    case 'html':
      return Buffer.from(renderHtml(model), 'utf8');
    case 'csv':
      return Buffer.from(renderCsv(model), 'utf8');
    case 'pdf':
      // Allocation asks for pdf only where a renderer exists; a worker without one fails the job so another may take it.
      if (!ctx.pdf) throw new Error('No Chromium in this worker: cannot render a pdf document.');
      return Buffer.from(await ctx.pdf.render(renderHtml(model), timesheetFooter(model)));
  }
}

import type { Db } from '../../db/connect.ts';
import { renderJob } from '../jobs/catalog.ts';
import { enqueue } from '../jobs/enqueue.ts';
import type { DocumentFormat } from './timesheet-model.ts';

/**
 * After a ticket's content was redacted (in the same transaction): every current timesheet that
 * quoted the ticket — the latest version of a sheet whose run billed an entry of it, in a run not
 * voided — gets a new version with the same number, rendered anew in every format by its jobs
 * (which read the ticket's text as it now is: the marker); what allocation fixed on the sheet (tax,
 * due date, review, the number it replaces) is carried over; the documents of the old version are
 * marked `redacted`. Returns how many runs were affected.
 */
export async function supersedeQuotingTimesheets(sql: Db, ticketId: string): Promise<number> {
  const sheets = await sql<{ id: string; runId: string; workspaceId: string; formats: DocumentFormat[] }[]>`
    insert into timesheets (workspace_id, run_id, client_id, project_id, scope, number, version, formats, supersedes_id,
                            tax_rate_bp, tax_label, tax_note, due_on, review, replaces_number, details, logo_id)
    select s.workspace_id, s.run_id, s.client_id, s.project_id, s.scope, s.number, s.version + 1, s.formats, s.id,
           s.tax_rate_bp, s.tax_label, s.tax_note, s.due_on, s.review, s.replaces_number, s.details, s.logo_id
    from timesheets s join billing_runs r on r.id = s.run_id
    where r.status <> 'voided'
      and not exists (select 1 from timesheets newer where newer.supersedes_id = s.id)
      and exists (select 1 from billing_run_entries l where l.run_id = s.run_id and l.ticket_id = ${ticketId}
                  and l.client_id = s.client_id and (s.project_id is null or l.project_id = s.project_id))
    returning id, run_id as "runId", workspace_id as "workspaceId", formats`;
  if (sheets.length === 0) return 0;
  await sql`
    update documents d set redacted = true
    from timesheets s where s.id = any(${sheets.map((s) => s.id)}::uuid[]) and d.timesheet_id = s.supersedes_id`;
  for (const sheet of sheets) {
    for (const format of sheet.formats) {
      await enqueue(sql, renderJob, { workspaceId: sheet.workspaceId, timesheetId: sheet.id, format });
    }
  }
  return new Set(sheets.map((s) => s.runId)).size;
}

import type { Db } from '../../db/connect.ts';

/**
 * What a timesheet prints beyond its time and money (issue 23), as fixed at allocation in
 * `timesheets.details`: the agency's legal name, address, tax id and bank details (workspace
 * settings), the client's billing address, tax id and line layout. Null on a timesheet allocated
 * before these existed: it renders as it always did.
 */
export interface TimesheetDetails {
  agency: {
    legalName: string | null;
    address: string | null;
    taxId: string | null;
    bankAccountHolder: string | null;
    bankIban: string | null;
    bankBic: string | null;
    bankDetails: string | null;
  };
  client: { billingAddress: string | null; taxId: string | null };
  lines: 'ticket' | 'entry';
}

/**
 * Fixes the details and the logo on every timesheet of a run, inside the allocation's transaction:
 * copies, not references, so a later change of the settings or the client alters no issued
 * document and no re-rendered version (a logo row is never changed: a new upload is a new row).
 */
export async function fixTimesheetDetails(sql: Db, runId: string): Promise<void> {
  await sql`
    update timesheets s set
      details = jsonb_build_object(
        'agency', jsonb_build_object('legalName', w.legal_name, 'address', w.address, 'taxId', w.tax_id,
                                     'bankAccountHolder', w.bank_account_holder, 'bankIban', w.bank_iban, 'bankBic', w.bank_bic,
                                     'bankDetails', w.bank_details),
        'client', jsonb_build_object('billingAddress', c.billing_address, 'taxId', c.tax_id),
        'lines', c.timesheet_lines),
      logo_id = w.logo_id
    from workspaces w, clients c
    where s.run_id = ${runId} and w.id = s.workspace_id and c.id = s.client_id`;
}

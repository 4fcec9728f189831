import type { Db } from '../../db/connect.ts';
import type { TimesheetDetails } from './details.ts';
import type { DocumentLogo, TimesheetBank, TimesheetLine, TimesheetModel, TimesheetSection, TimesheetTotals } from './timesheet-model.ts';

interface SheetRow {
  id: string;
  number: string;
  version: number;
  scope: 'combined' | 'project';
  runId: string;
  clientId: string;
  projectId: string | null;
  agency: string;
  clientName: string;
  clientCode: string;
  locale: string;
  periodStart: string;
  periodEnd: string;
  issuedOn: string;
  runCreatedAt: Date;
  taxRateBasisPoints: number;
  taxLabel: string | null;
  taxNote: string | null;
  dueOn: string | null;
  replacesNumber: string | null;
  details: TimesheetDetails | null;
  logo: DocumentLogo | null;
  poNumber: string | null;
}

interface LineRow extends TimesheetLine {
  currency: string | null;
  projectId: string;
  projectKey: string;
  projectName: string;
  bankId: string | null;
}

/**
 * Everything one timesheet shows, read in three statements: the sheet with its client, period and
 * agency; its lines (the run's lines of this client, and project for a project-scope sheet, with
 * the ticket's current text, so a redacted ticket shows the marker); and the banks they draw on.
 * The run's lines are read whether or not the run was voided since: a document shows what its run billed.
 */
export async function loadTimesheet(sql: Db, timesheetId: string): Promise<TimesheetModel | null> {
  const [s] = await sql<SheetRow[]>`
    select s.id, s.number, s.version, s.scope, s.run_id as "runId", s.client_id as "clientId", s.project_id as "projectId",
           w.name as agency, c.name as "clientName", c.code as "clientCode", c.locale,
           p.period_start::text as "periodStart", p.period_end::text as "periodEnd",
           to_char(r.created_at at time zone 'UTC', 'YYYY-MM-DD') as "issuedOn", r.created_at as "runCreatedAt",
           s.tax_rate_bp as "taxRateBasisPoints", s.tax_label as "taxLabel", s.tax_note as "taxNote", s.due_on::text as "dueOn", s.replaces_number as "replacesNumber",
           s.details, r.po_number as "poNumber",
           -- not encode(…, 'base64'): postgres breaks its lines every 76 characters
           (select json_build_object('contentType', l.content_type, 'base64', translate(encode(l.content, 'base64'), E'\n', '')) from logos l where l.id = s.logo_id) as logo
    from timesheets s
    join billing_runs r on r.id = s.run_id
    join periods p on p.id = r.period_id
    join clients c on c.id = s.client_id
    join workspaces w on w.id = s.workspace_id
    where s.id = ${timesheetId}`;
  if (!s) return null;
  const lines = await sql<LineRow[]>`
    select l.entry_id as "entryId", l.ticket_id as "ticketId", pr.key || '-' || t.number as "humanId",
           coalesce(t.billing_description, t.title) as text, e.spent_on::text as "spentOn", i.name as person, cc.name as category,
           l.minutes, l.policy, b.name as "bankName", l.bank_id as "bankId", e.corrects_entry_id is not null as correction,
           pr.id as "projectId", pr.key as "projectKey", pr.name as "projectName",
           l.currency, l.rate_minor as "rateMinor", l.list_amount_minor as "listAmountMinor", l.amount_minor as "amountMinor"
    from billing_run_entries l
    join time_entries e on e.id = l.entry_id
    join tickets t on t.id = l.ticket_id
    join projects pr on pr.id = l.project_id
    join identities i on i.id = e.user_id
    left join consultant_categories cc on cc.id = e.category_id
    left join banks b on b.id = l.bank_id
    where l.run_id = ${s.runId} and l.client_id = ${s.clientId} ${s.projectId ? sql`and l.project_id = ${s.projectId}` : sql``}
    order by pr.key, t.number, e.spent_on, i.name, e.created_at, e.id`;
  const banks = await bankBoxes(sql, s, lines);
  return {
    number: s.number,
    version: s.version,
    scope: s.scope,
    agency: { name: s.agency, ...agencyDetails(s) },
    client: { id: s.clientId, name: s.clientName, code: s.clientCode, locale: s.locale, ...present(s.details?.client ?? {}) },
    ...documentDetails(s),
    // the run's lines of one client share the currency they were allocated in
    currency: lines.find((l) => l.currency)?.currency ?? null,
    tax: { rateBasisPoints: s.taxRateBasisPoints, label: s.taxLabel, note: s.taxNote },
    dueOn: s.dueOn,
    // absent rather than null, so a document that replaces nothing renders as it always did
    ...(s.replacesNumber ? { replacesNumber: s.replacesNumber } : {}),
    period: { start: s.periodStart, end: s.periodEnd },
    issuedOn: s.issuedOn,
    sections: sections(lines),
    totals: totalsOf(lines),
    banks,
  };
}

/** The keys of `o` that have a value: a detail the settings leave empty is absent from the model, as on a timesheet made before them. */
function present<T extends object>(o: T): { [K in keyof T]?: NonNullable<T[K]> } {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== null && v !== undefined)) as { [K in keyof T]?: NonNullable<T[K]> };
}

function agencyDetails(s: SheetRow): Partial<TimesheetModel['agency']> {
  const a = s.details?.agency;
  return { ...present({ legalName: a?.legalName, address: a?.address, taxId: a?.taxId }), ...(s.logo ? { logo: s.logo } : {}) };
}

/** The bank details, PO number and line layout fixed on the timesheet (issue 23); nothing for a timesheet made before them. */
function documentDetails(s: SheetRow): Pick<TimesheetModel, 'bank' | 'poNumber' | 'lineLayout'> {
  const a = s.details?.agency;
  const bank = a && (a.bankAccountHolder || a.bankIban || a.bankBic || a.bankDetails);
  return {
    ...(bank ? { bank: { accountHolder: a.bankAccountHolder, iban: a.bankIban, bic: a.bankBic, details: a.bankDetails } } : {}),
    ...(s.poNumber ? { poNumber: s.poNumber } : {}),
    ...(s.details?.lines === 'entry' ? { lineLayout: 'entry' as const } : {}),
  };
}

function sections(lines: LineRow[]): TimesheetSection[] {
  const byProject = new Map<string, TimesheetSection>();
  for (const { projectId, projectKey, projectName, bankId: _bankId, currency: _currency, ...line } of lines) {
    let section = byProject.get(projectId);
    if (!section) byProject.set(projectId, (section = { project: { id: projectId, key: projectKey, name: projectName }, lines: [], totals: totalsOf([]) }));
    section.lines.push(line);
  }
  for (const section of byProject.values()) section.totals = totalsOf(section.lines);
  return [...byProject.values()];
}

/** Sums of the lines; money, when the lines carry it, as the sum of their rounded amounts (never re-rounded). */
export function totalsOf(lines: Pick<TimesheetLine, 'minutes' | 'policy' | 'amountMinor'>[]): TimesheetTotals {
  const t: TimesheetTotals = { minutes: 0, chargedMinutes: 0, freeMinutes: 0, bankMinutes: 0 };
  for (const l of lines) {
    if (l.amountMinor !== undefined && l.amountMinor !== null) t.amountMinor = (t.amountMinor ?? 0) + l.amountMinor;
    t.minutes += l.minutes;
    if (l.policy === 'paid') t.chargedMinutes += l.minutes;
    else if (l.policy === 'free') t.freeMinutes += l.minutes;
    else t.bankMinutes += l.minutes;
  }
  return t;
}

/**
 * Per bank drawn on by these lines: the balance before this run (deposits made before the run,
 * minus the live draw-downs of earlier runs), what these lines draw, and the balance after. Fixed
 * by the run's start time, so a re-rendered version shows the same figures.
 */
async function bankBoxes(sql: Db, s: SheetRow, lines: LineRow[]): Promise<TimesheetBank[]> {
  const drawn = new Map<string, number>();
  for (const l of lines) if (l.bankId) drawn.set(l.bankId, (drawn.get(l.bankId) ?? 0) + l.minutes);
  if (drawn.size === 0) return [];
  const rows = await sql<{ id: string; name: string; before: number }[]>`
    select b.id, b.name,
           (coalesce((select sum(d.minutes) from bank_deposits d where d.bank_id = b.id and d.created_at < ${s.runCreatedAt}), 0)
            - coalesce((select sum(l.minutes) from billing_run_entries l join billing_runs r on r.id = l.run_id
                        where l.bank_id = b.id and l.active and r.created_at < ${s.runCreatedAt}), 0))::int as before
    from banks b where b.id = any(${[...drawn.keys()]}::uuid[]) order by b.name, b.id`;
  return rows.map((b) => {
    const d = drawn.get(b.id) ?? 0;
    return { id: b.id, name: b.name, beforeMinutes: b.before, drawnMinutes: d, afterMinutes: b.before - d };
  });
}

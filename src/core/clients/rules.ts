import type { Ctx } from '../ctx.ts';
import { conflict, invalid } from '../errors.ts';

/**
 * The client's locale as Intl spells it (`de-de` -> `de-DE`), or 400 `unknown_locale`: timesheets
 * format dates and numbers with Intl, so a locale Intl does not know would fall back silently.
 */
export function canonicalLocale(value: string): string {
  let canonical: string | undefined;
  try {
    canonical = Intl.getCanonicalLocales(value)[0];
  } catch {
    canonical = undefined;
  }
  if (!canonical || Intl.DateTimeFormat.supportedLocalesOf(canonical).length === 0) {
    throw invalid('unknown_locale', { field: 'locale' }, `${value} is not a locale this service can format timesheets in.`);
  }
  return canonical;
}

/**
 * A `bank:<id>` default policy names a bank of this very client (400 `unknown_bank` when no such
 * bank is in the workspace, `bank_client_mismatch` when it is another client's): a run draws a
 * ticket's minutes from its billing client's bank only.
 */
export async function checkClientBank(ctx: Ctx, policy: string, clientId: string | null): Promise<void> {
  if (!policy.toLowerCase().startsWith('bank:')) return;
  const [bank] = await ctx.sql<{ clientId: string }[]>`
    select client_id as "clientId" from banks where id = ${policy.slice(5).toLowerCase()}::uuid and workspace_id = ${ctx.principal.workspaceId}`;
  if (!bank) throw invalid('unknown_bank', { field: 'billingPolicy' }, 'No such bank in this workspace.');
  if (bank.clientId !== clientId) throw invalid('bank_client_mismatch', { field: 'billingPolicy' }, 'The bank belongs to another client.');
}

/** 409 `client_code_taken` when another client of the workspace has `code`. */
export async function assertCodeFree(ctx: Ctx, code: string, exceptId: string | null): Promise<void> {
  const [hit] = await ctx.sql`
    select 1 from clients where workspace_id = ${ctx.principal.workspaceId} and code = ${code} and id is distinct from ${exceptId}::uuid`;
  if (hit) throw conflict('client_code_taken', { field: 'code', code }, `Another client has the code ${code}.`);
}

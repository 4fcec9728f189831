import { z } from 'zod';
import type { Ctx } from '../ctx.ts';
import { conflict, notFound } from '../errors.ts';
import { dateSchema } from '../input.ts';
import { defineOp } from '../operation.ts';
import { idField, withReasons } from '../validation.ts';
import { selectBankBalances } from './balances.ts';
import { bankBalanceSchema, bankListSchema, depositResultSchema, type BankBalance, type BankDeposit } from './schema.ts';

/**
 * The Owner/Admin bank endpoints (browser session): every bank, a client's banks, a new bank, a
 * deposit. Balances come from the same query as get_bank_balances (selectBankBalances).
 */

/** A deposit's bound: the column's check (bank_deposits.minutes). */
export const MAX_DEPOSIT_MINUTES = 10_000_000;

export const createBankInput = z.object({
  clientId: z.uuid().toLowerCase().describe('The client whose prepaid hours the bank holds.'),
  name: z.string().trim().min(1).max(200).describe('Bank name, unique per client (case-insensitive), 1-200 characters.'),
});

export const depositInput = z.object({
  minutes: z
    .int()
    .min(-MAX_DEPOSIT_MINUTES)
    .max(MAX_DEPOSIT_MINUTES)
    .refine((m) => m !== 0, { message: 'A deposit is never zero.' })
    .describe('Minutes added; negative corrects an earlier deposit. Never zero.'),
  depositedOn: dateSchema.describe('The day the client paid for the hours, YYYY-MM-DD.'),
  note: z.string().trim().max(500).nullish().describe('Optional note, at most 500 characters.'),
});

const clientBanksInput = withReasons(z.object({ id: idField('The client (uuid).') }), { id: 'bad_uuid' });
const depositToBankInput = withReasons(depositInput.extend({ id: idField('The bank (uuid).') }), { id: 'bad_uuid' });

export type { BankDeposit } from './schema.ts';

/** The path's client, of this workspace: else 404 `unknown_client`. `lock` serialises bank creation for it. */
async function loadClient(ctx: Ctx, clientId: string, opts: { lock?: boolean } = {}): Promise<void> {
  const [c] = await ctx.sql`
    select 1 from clients where id = ${clientId} and workspace_id = ${ctx.principal.workspaceId}
    ${opts.lock ? ctx.sql`for no key update` : ctx.sql``}`;
  if (!c) throw notFound('unknown_client', { field: 'clientId' }, 'No such client.');
}

/** GET /billing/banks: every bank of the workspace with its balance. */
export const listBanks = defineOp({
  name: 'banks.list',
  action: 'banks.list',
  input: z.object({}),
  output: bankListSchema,
  run: async (ctx): Promise<{ banks: BankBalance[] }> => ({ banks: await selectBankBalances(ctx.sql, ctx.principal.workspaceId, ctx.sql`true`) }),
});

/** GET /clients/{id}/banks: one client's banks with their balances; an unknown client is 404. */
export const listClientBanks = defineOp({
  name: 'banks.list.client',
  action: 'banks.list',
  input: clientBanksInput,
  output: bankListSchema,
  run: async (ctx, { id: clientId }): Promise<{ banks: BankBalance[] }> => {
    await loadClient(ctx, clientId);
    return { banks: await selectBankBalances(ctx.sql, ctx.principal.workspaceId, ctx.sql`b.client_id = ${clientId}::uuid`) };
  },
});

/**
 * POST /billing/banks: a new, empty bank of a client. A name the client's banks already use, in
 * any letter case, is 409 `bank_exists` (two banks told apart only by case would be mistaken for
 * each other on a timesheet); creations for one client are serialised on its row.
 */
export const createBank = defineOp({
  name: 'banks.create',
  action: 'banks.create',
  input: createBankInput,
  output: bankBalanceSchema,
  tx: true,
  run: async (ctx, body): Promise<BankBalance> => {
    const { sql, principal: p } = ctx;
    await loadClient(ctx, body.clientId, { lock: true });
    const [taken] = await sql`select 1 from banks where client_id = ${body.clientId} and lower(name) = lower(${body.name})`;
    if (taken) throw conflict('bank_exists', { field: 'name' }, 'This client already has a bank of that name.');
    const [bank] = await sql<{ id: string }[]>`
      insert into banks (workspace_id, client_id, name, created_by) values (${p.workspaceId}, ${body.clientId}, ${body.name}, ${p.identityId})
      returning id`;
    const [balance] = await selectBankBalances(sql, p.workspaceId, sql`b.id = ${bank!.id}`);
    return balance!;
  },
});

/**
 * POST /billing/banks/{id}/deposits: tops a bank up (or corrects it, negative). Answers the
 * deposit and the bank's balance after it.
 */
export const depositToBank = defineOp({
  name: 'banks.deposit',
  action: 'banks.deposit',
  input: depositToBankInput,
  output: depositResultSchema,
  tx: true,
  run: async (ctx, body): Promise<{ deposit: BankDeposit; bank: BankBalance }> => {
    const { sql, principal: p } = ctx;
    const bankId = body.id;
    const [bank] = await sql`select 1 from banks where id = ${bankId} and workspace_id = ${p.workspaceId}`;
    if (!bank) throw notFound('unknown_bank', undefined, 'No such bank.');
    const [deposit] = await sql<BankDeposit[]>`
      insert into bank_deposits (bank_id, minutes, deposited_on, note, created_by, created_at)
      values (${bankId}, ${body.minutes}, ${body.depositedOn}::date, ${body.note || null}, ${p.identityId}, ${ctx.now()})
      returning id, bank_id as "bankId", minutes, to_char(deposited_on, 'YYYY-MM-DD') as "depositedOn", note,
                created_by as "createdBy", to_char(created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') as "createdAt"`;
    const [balance] = await selectBankBalances(sql, p.workspaceId, sql`b.id = ${bankId}::uuid`);
    return { deposit: deposit!, bank: balance! };
  },
});

import { z } from 'zod';
import { dateOut, dateTimeOut, describing, uuidOut } from '../response-schema.ts';

/**
 * Response schemas of time banks: balances and deposits (minutes), with the result types they
 * describe (here, not in the operations that declare them as output, so no circle).
 */

/** One time bank with its balance; all figures in minutes. */
export interface BankBalance {
  id: string;
  name: string;
  clientId: string;
  clientName: string;
  /** Sum of deposits (negative deposits correct earlier ones). */
  depositedMinutes: number;
  /** Minutes billed against this bank by runs not voided (corrections are signed). */
  consumedMinutes: number;
  /** depositedMinutes - consumedMinutes; negative when overdrawn. */
  remainingMinutes: number;
}

export interface BankDeposit {
  id: string;
  bankId: string;
  minutes: number;
  depositedOn: string;
  note: string | null;
  createdBy: string | null;
  createdAt: string;
}

export const bankBalanceSchema = describing<BankBalance>()(
  z
    .object({
      id: uuidOut,
      name: z.string(),
      clientId: uuidOut,
      clientName: z.string(),
      depositedMinutes: z.number().int(),
      consumedMinutes: z.number().int(),
      remainingMinutes: z.number().int().describe('Negative when overdrawn.'),
    })
    .meta({ id: 'BankBalance' }),
);

export const bankListSchema = z.object({ banks: z.array(bankBalanceSchema) }).meta({ id: 'BankList' });

export const bankDepositSchema = describing<BankDeposit>()(
  z
    .object({
      id: uuidOut,
      bankId: uuidOut,
      minutes: z.number().int(),
      depositedOn: dateOut,
      note: z.string().nullable(),
      createdBy: uuidOut.nullable(),
      createdAt: dateTimeOut,
    })
    .meta({ id: 'BankDeposit' }),
);

export const depositResultSchema = z.object({ deposit: bankDepositSchema, bank: bankBalanceSchema });

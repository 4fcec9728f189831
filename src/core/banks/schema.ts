import { z } from 'zod';
import { dateOut, dateTimeOut, describing, uuidOut } from '../response-schema.ts';
import type { BankBalance } from './balances.ts';
import type { BankDeposit } from './manage.ts';

/** Response schemas of time banks: balances and deposits (minutes). */

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

import { z } from 'zod';
import { dateOut, dateTimeOut, describing, uuidOut } from '../response-schema.ts';

/** The contract's Period. */
export interface Period {
  id: string;
  periodStart: string;
  periodEnd: string;
  closedAt: string | null;
  closedBy: string | null;
}

/** Response schema of the contract's Period. */
export const periodSchema = describing<Period>()(
  z
    .object({
      id: uuidOut,
      periodStart: dateOut,
      periodEnd: dateOut,
      closedAt: dateTimeOut.nullable(),
      closedBy: uuidOut.nullable(),
    })
    .meta({ id: 'Period' }),
);

export const periodListSchema = z.object({ periods: z.array(periodSchema) });

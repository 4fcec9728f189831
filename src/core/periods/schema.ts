import { z } from 'zod';
import { dateOut, dateTimeOut, describing, uuidOut } from '../response-schema.ts';
import type { Period } from './manage.ts';

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

import { z } from 'zod';
import { dateOut, describing, uuidOut } from '../response-schema.ts';
import { currencyField, MAX_HOURLY_MINOR } from './money.ts';

/** A rate's input fields and the response schemas of GET/PUT /rates (issue 23). */

export interface Rate {
  id: string;
  categoryId: string;
  /** A client's override; null with projectId null: the workspace's default. */
  clientId: string | null;
  /** A project's override (it wins over the client's). */
  projectId: string | null;
  currency: string;
  /** Minor units of the currency per hour (EUR 9500 = 95.00 an hour). */
  hourlyRateMinor: number;
  effectiveFrom: string;
  /** Names beside the ids (additive), so a person or an assistant reads the table without lookups. */
  categoryName: string;
  /** The override's client code; null for a project's or the default. */
  clientCode: string | null;
  /** The override's project key; null for a client's or the default. */
  projectKey: string | null;
}

export const rateFields = z
  .object({
    categoryId: z.uuid().toLowerCase().describe('The consultant category the rate is for.'),
    clientId: z.uuid().toLowerCase().nullable().optional().describe("A client's override; omit (or null) for the workspace default."),
    projectId: z.uuid().toLowerCase().nullable().optional().describe("A project's override (wins over the client's); not together with clientId."),
    currency: currencyField,
    hourlyRateMinor: z.number().int().min(0).max(MAX_HOURLY_MINOR).describe('Minor units of the currency per hour (EUR 9500 = 95.00 an hour).'),
    effectiveFrom: z.iso
      .date()
      .describe('The first day (YYYY-MM-DD) time is billed at this rate; it applies until the next rate of the same scope, category and currency.'),
  })
  .refine((r) => !(r.clientId && r.projectId), { path: ['projectId'], message: 'A rate is for a client or for a project, not both.' });

export type RateFields = z.output<typeof rateFields>;

export const rateSchema = describing<Rate>()(
  z
    .object({
      id: uuidOut,
      categoryId: uuidOut,
      clientId: uuidOut.nullable(),
      projectId: uuidOut.nullable(),
      currency: z.string().describe('ISO 4217; only rates in a client’s currency apply to its time.'),
      hourlyRateMinor: z.number().int().describe('Minor units of the currency per hour (EUR 9500 = 95.00 an hour).'),
      effectiveFrom: dateOut.describe('The first day it applies; it applies until the next rate of the same category, scope and currency.'),
      categoryName: z.string().describe("The category's name."),
      clientCode: z.string().nullable().describe("The client override's code; null otherwise."),
      projectKey: z.string().nullable().describe("The project override's key; null otherwise."),
    })
    .meta({ id: 'Rate' }),
);

export const rateListSchema = describing<{ rates: Rate[] }>()(z.object({ rates: z.array(rateSchema) }).meta({ id: 'RateList' }));

import { z } from 'zod';
import { listRates } from '../../core/rates/list.ts';
import { minorToDecimal } from '../../core/rates/money.ts';
import { lines } from '../shapes.ts';
import { defineTool } from '../tool.ts';

/**
 * The workspace's hourly rates (issue 23), for Owners and Admins (an admin-scoped token): read
 * only. No write tool: replacing the table is PUT /rates or the console (a table replace is a poor
 * fit for a model, and tools/list stays inside its 40 KB budget).
 */
export const listRatesTool = defineTool({
  name: 'list_rates',
  title: 'List rates',
  description:
    'Hourly rates per consultant category: workspace default, or a client/project override (project wins), in a currency, from a date until the next one. Billing uses the client’s currency.',
  toolset: 'documents',
  op: listRates,
  idempotent: true,
  input: () => z.object({}),
  output: z.object({
    rates: z.array(
      z.object({
        category: z.string(),
        client: z.string().nullable(),
        project: z.string().nullable(),
        currency: z.string(),
        hourlyRateMinor: z.number(),
        effectiveFrom: z.string(),
      }),
    ),
  }),
  args: () => ({}),
  result: ({ rates }) => ({
    rates: rates.map((r) => ({
      category: r.categoryName,
      client: r.clientCode,
      project: r.projectKey,
      currency: r.currency,
      hourlyRateMinor: r.hourlyRateMinor,
      effectiveFrom: r.effectiveFrom,
    })),
  }),
  text: (o) =>
    lines(
      o.rates,
      (r) =>
        `${r.category}, ${r.project ? `project ${r.project}` : r.client ? `client ${r.client}` : 'default'}: ${r.currency} ${minorToDecimal(r.hourlyRateMinor, r.currency)}/h from ${r.effectiveFrom}`,
      'No rates.',
    ),
});

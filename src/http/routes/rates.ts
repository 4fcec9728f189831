import { listRates } from '../../core/rates/list.ts';
import { replaceRates, replaceRatesInput } from '../../core/rates/replace.ts';
import { defineRoute } from '../route-table.ts';

/** Hourly rates (issue 23): Owner/Admin by browser session or an admin-scoped token. */
export const ratesRoutes = [
  defineRoute({ method: 'GET', path: '/rates', op: listRates, input: {} }),
  defineRoute({ method: 'PUT', path: '/rates', op: replaceRates, input: { body: replaceRatesInput } }),
];

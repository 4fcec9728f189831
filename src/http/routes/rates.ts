import { listRates } from '../../core/rates/list.ts';
import { replaceRates, replaceRatesInput } from '../../core/rates/replace.ts';
import { defineRoute } from '../route-table.ts';

/** Hourly rates (issue 23): Owner/Admin by browser session or an admin-scoped token. */
export const ratesRoutes = [
  defineRoute({
    method: 'GET',
    path: '/rates',
    op: listRates,
    input: {},
    description:
      "The workspace's hourly rates, ordered by category, scope, currency and date. A rate is for a consultant category, in a currency " +
      '(ISO 4217), in minor units per hour, from a date until the next rate of the same category, scope and currency; its scope is the ' +
      "workspace default, a client's override or a project's (project wins over client, client over default). A run bills each entry at " +
      "the rate in its client's currency in effect on the entry's day, and keeps it: changing rates alters no run or document.",
  }),
  defineRoute({
    method: 'PUT',
    path: '/rates',
    op: replaceRates,
    input: { body: replaceRatesInput },
    description:
      'Replaces the whole rate table in one transaction (audited `rates.replace`). Refused: a category, client or project not of this ' +
      'workspace (404 `unknown_category`/`unknown_client`/`unknown_project`, `field` naming the row), two rates of one category, scope and ' +
      'currency from the same day (409 `duplicate_rate`, `index` and `duplicateOf`), a client and a project on one rate, a currency not ' +
      'ISO 4217, a rate below 0, fractional or above 50,000,000, a malformed date (400 `validation`). A workspace without any rate bills hours only.',
  }),
];

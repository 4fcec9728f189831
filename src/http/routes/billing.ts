import { z } from 'zod';
import { getRun, listRunEntries, listRunEntriesQuery, listRuns, listRunsInput } from '../../core/billing/list.ts';
import { approveRun } from '../../core/billing/approve.ts';
import { startRun, startRunInput } from '../../core/billing/start.ts';
import { voidRun, voidRunFields } from '../../core/billing/void.ts';
import { defineRoute, idParam } from '../route-table.ts';
import { billingRunSchema, runPreviewSchema } from '../../core/billing/run-schema.ts';

const runParams = z.object({ id: idParam() });

/** Billing runs (issue 11): Owner/Admin from a browser session. */
export const billingRoutes = [
  defineRoute({
    method: 'POST',
    path: '/billing/runs',
    op: startRun,
    input: { body: startRunInput },
    output: { 200: runPreviewSchema, 201: billingRunSchema },
    description:
      'Bills a closed period. With `dryRun: true`, a preview that writes nothing (200): the entries per client and project, ' +
      '`money` (what each client would be charged, in minor units of its currency; empty in a workspace without rates), ' +
      '`warnings` (entries without a rate: `missing_rate`) and `changes` (per client, entries added, removed and changed in minutes or rate ' +
      "since the period's latest run that billed lines; null when there is none). Otherwise the run is created (201) and allocated by a job; " +
      'in a workspace with rates a paid entry without one refuses the run (409 `missing_rate`, naming up to 100 entries) unless ' +
      '`billUnratedAtZero: true` confirms billing them at zero. Each line keeps the rate of its day, so a later rate change alters no run.',
    // a preview writes nothing (200); a run is created (201)
    respond: (ctx, result) => {
      ctx.status = result.dryRun ? 200 : 201;
      ctx.body = result;
    },
  }),
  defineRoute({ method: 'GET', path: '/billing/runs', op: listRuns, input: { query: listRunsInput } }),
  defineRoute({
    method: 'GET',
    path: '/billing/runs/:id',
    op: getRun,
    input: { params: runParams },
    description:
      "One run with per-client totals and its current documents. On a priced run each client carries `currency`, `amountMinor` (charged) and `listAmountMinor` (what all its lines cost at their rates); an hours-only run's clients have none of them.",
  }),
  defineRoute({ method: 'GET', path: '/billing/runs/:id/entries', op: listRunEntries, input: { params: runParams, query: listRunEntriesQuery } }),
  defineRoute({ method: 'POST', path: '/billing/runs/:id/void', op: voidRun, input: { params: runParams, body: voidRunFields } }),
  // issue 23: releases the deliveries of a run held for review (409 run_not_awaiting_approval otherwise)
  defineRoute({ method: 'POST', path: '/billing/runs/:id/approve', op: approveRun, input: { params: runParams } }),
];

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
    // a preview writes nothing (200); a run is created (201)
    respond: (ctx, result) => {
      ctx.status = result.dryRun ? 200 : 201;
      ctx.body = result;
    },
  }),
  defineRoute({ method: 'GET', path: '/billing/runs', op: listRuns, input: { query: listRunsInput } }),
  defineRoute({ method: 'GET', path: '/billing/runs/:id', op: getRun, input: { params: runParams } }),
  defineRoute({ method: 'GET', path: '/billing/runs/:id/entries', op: listRunEntries, input: { params: runParams, query: listRunEntriesQuery } }),
  defineRoute({ method: 'POST', path: '/billing/runs/:id/void', op: voidRun, input: { params: runParams, body: voidRunFields } }),
  // issue 23: releases the deliveries of a run held for review (409 run_not_awaiting_approval otherwise)
  defineRoute({ method: 'POST', path: '/billing/runs/:id/approve', op: approveRun, input: { params: runParams } }),
];

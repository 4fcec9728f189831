import { z } from 'zod';
import { createBank, createBankInput, depositInput, depositToBank, listBanks, listClientBanks } from '../../core/banks/manage.ts';
import { defineRoute, idParam } from '../route-table.ts';

const byId = z.object({ id: idParam() });

/** Time banks (issue 11): Owner/Admin from a browser session; token holders read balances over MCP. */
export const banksRoutes = [
  defineRoute({ method: 'GET', path: '/billing/banks', op: listBanks, input: {} }),
  defineRoute({ method: 'POST', path: '/billing/banks', op: createBank, input: { body: createBankInput }, status: 201 }),
  defineRoute({ method: 'POST', path: '/billing/banks/:id/deposits', op: depositToBank, input: { params: byId, body: depositInput }, status: 201 }),
  defineRoute({ method: 'GET', path: '/clients/:id/banks', op: listClientBanks, input: { params: byId } }),
];

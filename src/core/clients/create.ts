import { z } from 'zod';
import { defineOp } from '../operation.ts';
import { withReasons } from '../validation.ts';
import { loadClient } from './read.ts';
import { assertCodeFree, canonicalLocale, checkClientBank } from './rules.ts';
import {
  clientCodeField,
  clientCurrencyField,
  clientModeField,
  clientNameField,
  clientPolicyField,
  clientSchema,
  layoutField,
  localeField,
  type Client,
} from './schema.ts';

export const createClientInput = withReasons(
  z.object({
    name: clientNameField,
    code: clientCodeField,
    locale: localeField.default('en-GB'),
    timesheetLayout: layoutField.default('combined'),
    billingPolicy: clientPolicyField.default('paid'),
    billingMode: clientModeField.default('period'),
    currency: clientCurrencyField.default('EUR'),
  }),
  { billingPolicy: 'policy_format', currency: 'bad_currency' },
);

/**
 * POST /clients (Owner/Admin): a new client. A code another client has is 409 `client_code_taken`;
 * a bank policy cannot name a bank yet (banks belong to a client that exists): 400 `bank_client_mismatch`.
 */
export const createClient = defineOp({
  name: 'clients.create',
  action: 'clients.create',
  input: createClientInput,
  output: clientSchema,
  tx: true,
  audit: { action: 'clients.create', target: (s) => (typeof s.code === 'string' ? s.code : null) },
  run: async (ctx, input): Promise<Client> => {
    const locale = canonicalLocale(input.locale);
    await checkClientBank(ctx, input.billingPolicy, null);
    await assertCodeFree(ctx, input.code, null);
    const [row] = await ctx.sql<{ id: string }[]>`
      insert into clients (workspace_id, name, code, locale, timesheet_layout, billing_policy, billing_mode, currency, created_at)
      values (${ctx.principal.workspaceId}, ${input.name}, ${input.code}, ${locale}, ${input.timesheetLayout}, ${input.billingPolicy.toLowerCase()},
              ${input.billingMode}, ${input.currency}, ${ctx.now()})
      on conflict (workspace_id, code) do nothing
      returning id`;
    // a concurrent create took the code between the check and the insert
    if (!row) await assertCodeFree(ctx, input.code, null);
    return loadClient(ctx, row!.id);
  },
});

import { z } from 'zod';
import { defineOp } from '../operation.ts';
import { idField, withReasons } from '../validation.ts';
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
  paymentTermsField,
  billingAddressField,
  clientTaxIdField,
  timesheetLinesField,
  deliveryField,
  taxLabelField,
  taxNoteField,
  taxRateField,
  localeField,
  type Client,
} from './schema.ts';

export const updateClientFields = z.object({
  name: clientNameField.optional(),
  code: clientCodeField.optional(),
  locale: localeField.optional(),
  timesheetLayout: layoutField.optional(),
  billingPolicy: clientPolicyField.optional(),
  billingMode: clientModeField.optional(),
  currency: clientCurrencyField.optional(),
  taxRateBasisPoints: taxRateField.optional(),
  taxLabel: taxLabelField.optional(),
  taxNote: taxNoteField.optional(),
  paymentTermsDays: paymentTermsField.optional(),
  billingAddress: billingAddressField.optional(),
  taxId: clientTaxIdField.optional(),
  timesheetLines: timesheetLinesField.optional(),
  delivery: deliveryField.optional(),
});

export const updateClientInput = withReasons(updateClientFields.extend({ id: idField('The client.') }), {
  id: 'bad_uuid',
  billingPolicy: 'policy_format',
  currency: 'bad_currency',
});

/**
 * PATCH /clients/{id} (Owner/Admin): changes the fields sent. The defaults apply to what is billed
 * from now on (a ticket or project with its own policy keeps it; documents already made keep their
 * number, layout, locale and currency). A new code starts the next document numbers.
 */
export const updateClient = defineOp({
  name: 'clients.update',
  action: 'clients.update',
  input: updateClientInput,
  output: clientSchema,
  tx: true,
  audit: {
    action: 'clients.update',
    target: (s) => (typeof s.id === 'string' ? s.id : null),
    detail: (i) =>
      Object.keys(i)
        .filter((k) => k !== 'id')
        .join(', '),
  },
  run: async (ctx, input): Promise<Client> => {
    const { sql } = ctx;
    const before = await loadClient(ctx, input.id, { lock: true });
    const locale = input.locale === undefined ? before.locale : canonicalLocale(input.locale);
    if (input.billingPolicy !== undefined) await checkClientBank(ctx, input.billingPolicy, input.id);
    if (input.code !== undefined && input.code !== before.code) await assertCodeFree(ctx, input.code, input.id);
    await sql`
      update clients set
        name = ${input.name ?? before.name},
        code = ${input.code ?? before.code},
        locale = ${locale},
        timesheet_layout = ${input.timesheetLayout ?? before.timesheetLayout},
        billing_policy = ${input.billingPolicy?.toLowerCase() ?? before.billingPolicy},
        billing_mode = ${input.billingMode ?? before.billingMode},
        currency = ${input.currency ?? before.currency},
        tax_rate_bp = ${input.taxRateBasisPoints ?? before.taxRateBasisPoints},
        tax_label = ${input.taxLabel === undefined ? before.taxLabel : input.taxLabel},
        tax_note = ${input.taxNote === undefined ? before.taxNote : input.taxNote},
        payment_terms_days = ${input.paymentTermsDays === undefined ? before.paymentTermsDays : input.paymentTermsDays},
        billing_address = ${input.billingAddress === undefined ? before.billingAddress : input.billingAddress},
        tax_id = ${input.taxId === undefined ? before.taxId : input.taxId},
        timesheet_lines = ${input.timesheetLines ?? before.timesheetLines},
        delivery = ${input.delivery ?? before.delivery}
      where id = ${input.id}`;
    return loadClient(ctx, input.id);
  },
});

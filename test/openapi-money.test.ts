import { describe, expect, it } from 'vitest';
import { buildOpenApi } from '../src/http/openapi/document.ts';
import { REST_API } from '../src/http/routes/index.ts';

/**
 * Issue 23's additions as the OpenAPI document describes them: /rates and POST /billing/runs carry
 * the contract's prose as their description, and the schemas describe the client's currency,
 * billUnratedAtZero, the preview's money, warnings and changes, and a run's per-client money.
 */
const doc = buildOpenApi(REST_API) as any;
const op = (path: string, method: string) => doc.paths[`/api/w/{slug}${path}`][method];
const schema = (name: string) => doc.components.schemas[name];

describe('the OpenAPI document on rates and money', () => {
  it('describes GET and PUT /rates and POST /billing/runs in prose', () => {
    expect(op('/rates', 'get').description).toMatch(/project wins over client, client over default/);
    expect(op('/rates', 'put').description).toMatch(/duplicate_rate/);
    const start = op('/billing/runs', 'post');
    for (const word of ['`money`', '`warnings`', '`changes`', 'billUnratedAtZero', 'missing_rate']) expect(start.description).toContain(word);
    expect(op('/billing/runs/{id}', 'get').description).toContain('amountMinor');
  });

  it('describes the fields: rates, the client currency, billUnratedAtZero, money, warnings, changes, per-client money', () => {
    expect(schema('Rate').properties.hourlyRateMinor.description).toMatch(/minor units/i);
    expect(schema('Rate').properties.categoryName).toBeDefined();
    expect(JSON.stringify(op('/billing/runs', 'post').requestBody)).toContain('billUnratedAtZero');
    const preview = schema('RunPreview');
    expect(preview.properties.money.description).toMatch(/minor units/);
    expect(preview.properties.warnings.description).toMatch(/missing_rate/);
    expect(preview.properties.changes).toMatchObject({ $ref: '#/components/schemas/RunChanges' });
    expect(preview.properties.changes.description).toMatch(/What changed since the last run of the period/);
    expect(JSON.stringify(schema('RunChanges'))).toMatch(/released by its void/);
    const client = schema('BillingRun').properties.clients.items.properties;
    expect(client.amountMinor.description).toMatch(/absent on an hours-only run/);
    expect(schema('BillingRun').properties.clients.items.required).not.toContain('currency');
    expect(JSON.stringify(schema('Client'))).toMatch(/ISO 4217/);
  });
});

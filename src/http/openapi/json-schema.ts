import { z } from 'zod';

export type Json = Record<string, unknown>;

/** Formats the validators of integrators (and ajv-formats in our tests) check themselves: zod's long patterns beside them only repeat them. */
const FORMATS_WITH_OWN_CHECK = new Set(['uuid', 'date', 'date-time', 'email']);
const DEFS_REF = /^#\/\$defs\/(.+)$/;

/**
 * The shared schemas of one document (`components.schemas`): zod schemas given an `id` with
 * `.meta({ id })` are written once there and referenced, every other part is written in place.
 */
export class SchemaComponents {
  readonly schemas: Record<string, Json> = {};

  /**
   * The OpenAPI 3.1 schema (JSON Schema 2020-12, zod's native `z.toJSONSchema`) of a request part
   * (`input`: defaults make fields optional) or a response (`output`). Responses are open
   * (`additionalProperties: false` dropped) unless `closed`: fields may be added within a version,
   * and a client must ignore the ones it does not know; the test suite validates closed, so an
   * undocumented field fails there.
   */
  convert(schema: z.ZodType, io: 'input' | 'output', closed = false): Json {
    const suffix = io === 'input' ? 'Input' : '';
    const raw = z.toJSONSchema(schema, { target: 'draft-2020-12', io, unrepresentable: 'any' }) as Json;
    const { $defs, $schema: _schema, id: rootId, ...root } = raw;
    const clean = (node: Json) => tidy(node, suffix, io === 'output' && !closed) as Json;
    for (const [name, def] of Object.entries(($defs ?? {}) as Record<string, Json>)) this.schemas[name + suffix] ??= clean(def);
    // a schema with an id of its own is a component too, referenced from where it is used
    if (typeof rootId === 'string') {
      this.schemas[rootId + suffix] ??= clean(root);
      return { $ref: `#/components/schemas/${rootId}${suffix}` };
    }
    return clean(root);
  }
}

/** Zod's `$defs` references made component references; redundant patterns and closed objects dropped where asked. */
function tidy(node: unknown, suffix: string, open: boolean): unknown {
  if (Array.isArray(node)) return node.map((n) => tidy(n, suffix, open));
  if (!node || typeof node !== 'object') return node;
  const src = node as Json;
  const out: Json = {};
  for (const [k, v] of Object.entries(src)) {
    if (k === 'id' && typeof v === 'string') continue;
    if (k === 'pattern' && FORMATS_WITH_OWN_CHECK.has(String(src.format))) continue;
    if (k === 'additionalProperties' && v === false && open) continue;
    if (k === '$ref' && typeof v === 'string') {
      const def = DEFS_REF.exec(v)?.[1];
      out[k] = def ? `#/components/schemas/${def}${suffix}` : v;
      continue;
    }
    out[k] = tidy(v, suffix, open);
  }
  return out;
}

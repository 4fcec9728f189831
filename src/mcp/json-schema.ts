import { z } from 'zod';

type Json = Record<string, unknown>;

const FORMATS_WITH_OWN_CHECK = new Set(['uuid', 'date', 'date-time', 'email']);
/** A shared definition shorter than this is cheaper written in place than referenced. */
const INLINE_BELOW = 80;
const REF = /^#\/definitions\/(.+)$/;

/**
 * Drops what only repeats itself and costs a model tokens on every tools/list: the `$schema`
 * header, the regular expressions zod writes beside a `format` that validators already know
 * (a date pattern is 300 characters), integer bounds that are just the safe-integer range,
 * `additionalProperties: false` (results are parsed by the tool's own schema anyway) and a
 * record's `propertyNames: {type: string}`.
 */
function slim(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(slim);
  if (!node || typeof node !== 'object') return node;
  const src = mergeNullable(node as Json);
  const out: Json = {};
  for (const [k, v] of Object.entries(src)) {
    if (k === '$schema') continue;
    if (k === 'additionalProperties' && v === false) continue;
    if (k === 'propertyNames' && JSON.stringify(v) === '{"type":"string"}') continue;
    if (k === 'pattern' && FORMATS_WITH_OWN_CHECK.has(String(src.format))) continue;
    if ((k === 'minimum' || k === 'maximum') && Math.abs(Number(v)) === Number.MAX_SAFE_INTEGER) continue;
    out[k] = slim(v);
  }
  return out;
}

/**
 * `{anyOf: [{type: 'string', ...}, {type: 'null'}]}` (zod's nullable with constraints) as the
 * equivalent, shorter `{type: ['string', 'null'], ...}`: the constraints apply to strings only
 * (an `enum` gets `null` among its values).
 */
function mergeNullable(node: Json): Json {
  const any = node.anyOf;
  if (!Array.isArray(any) || any.length !== 2) return node;
  const [a, b] = any as Json[];
  if (JSON.stringify(b) !== '{"type":"null"}' || typeof a?.type !== 'string' || a.type === 'object' || a.type === 'array' || 'anyOf' in a) return node;
  const { anyOf: _anyOf, ...rest } = node;
  // an enum lists its values: null must be one of them too, or a null fails the enum
  const values = Array.isArray(a.enum) ? { enum: [...(a.enum as unknown[]), null] } : {};
  return { ...a, ...rest, ...values, type: [a.type, 'null'] };
}

/** Writes small shared definitions in place (zod shares even `{type: string}`) and drops the ones no longer referenced. */
function inlineSmallDefinitions(schema: Json): Json {
  const defs = (schema.definitions ?? {}) as Record<string, unknown>;
  const small = new Set(Object.keys(defs).filter((k) => JSON.stringify(defs[k]).length < INLINE_BELOW));
  const used = new Set<string>();
  const walk = (node: unknown): unknown => {
    if (Array.isArray(node)) return node.map(walk);
    if (!node || typeof node !== 'object') return node;
    const obj = node as Json;
    const ref = typeof obj.$ref === 'string' ? REF.exec(obj.$ref)?.[1] : undefined;
    if (ref && small.has(ref)) {
      const { $ref: _ref, ...rest } = obj;
      return { ...(walk(defs[ref]) as Json), ...rest };
    }
    if (ref) used.add(ref);
    return Object.fromEntries(Object.entries(obj).map(([k, v]) => [k, k === 'definitions' ? v : walk(v)]));
  };
  const { definitions: _defs, ...root } = walk(schema) as Json;
  // definitions may reference each other: keep walking until the set of used ones is closed
  const kept: Record<string, unknown> = {};
  for (let grew = true; grew;) {
    grew = false;
    for (const k of [...used]) {
      if (kept[k] === undefined) {
        kept[k] = walk(defs[k]);
        grew = true;
      }
    }
  }
  return Object.keys(kept).length ? { ...root, definitions: kept } : root;
}

/**
 * An output schema that also admits the error result's structuredContent ({code, reason, message,
 * details}), with no `required` list at any depth. The SDK's own client (1.x) validates
 * structuredContent against the output schema even when `isError` is set (typescript-sdk issue
 * #1943), so a required success field would turn every domain error into a protocol failure on
 * such a client. A branch per outcome (`anyOf` of the success's `required` and the error's)
 * restated every field name of every tool on each tools/list (2.6 KB), and the nested objects'
 * `required` lists restated them again (a ticket summary's eight names in every list tool): a
 * model reads the fields from `properties`, and the tool's own zod schema checks every result,
 * nested objects included, before it goes out.
 */
export function admitErrors(schema: Json): Json {
  return withoutRequired(schema) as Json;
}

function withoutRequired(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(withoutRequired);
  if (!node || typeof node !== 'object') return node;
  const out: Json = {};
  for (const [k, v] of Object.entries(node as Json)) {
    // `required` as a list of names; a property that happens to be called "required" stays
    if (k === 'required' && Array.isArray(v)) continue;
    out[k] = withoutRequired(v);
  }
  return out;
}

/**
 * The JSON Schema of a tool's input (`io: 'input'`: defaults make arguments optional) or output,
 * in the draft the MCP SDK itself emits (draft-07). Output schemas share repeated parts (a ticket
 * summary in six lists) through `definitions`.
 */
export function toolJsonSchema(schema: z.ZodObject, io: 'input' | 'output'): Json {
  const raw = z.toJSONSchema(schema, { target: 'draft-7', io, unrepresentable: 'any', reused: io === 'output' ? 'ref' : 'inline' });
  return slim(inlineSmallDefinitions(raw as Json)) as Json;
}

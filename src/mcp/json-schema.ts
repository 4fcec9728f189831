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
 * equivalent, shorter `{type: ['string', 'null'], ...}`: the constraints apply to strings only.
 */
function mergeNullable(node: Json): Json {
  const any = node.anyOf;
  if (!Array.isArray(any) || any.length !== 2) return node;
  const [a, b] = any as Json[];
  if (JSON.stringify(b) !== '{"type":"null"}' || typeof a?.type !== 'string' || a.type === 'object' || a.type === 'array' || 'anyOf' in a) return node;
  const { anyOf: _anyOf, ...rest } = node;
  return { ...a, ...rest, type: [a.type, 'null'] };
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
 * details}): the success fields are required only on the success branch. The SDK's own client
 * (1.x) validates structuredContent against the output schema even when `isError` is set
 * (typescript-sdk issue #1943), so without this branch every domain error would reach such a
 * client as a protocol failure instead of the error result.
 */
export function admitErrors(schema: Json): Json {
  const { required, ...rest } = schema;
  const success = Array.isArray(required) && required.length > 0 ? [{ required }] : [{}];
  return { ...rest, anyOf: [...success, { required: ['code', 'reason'] }] };
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

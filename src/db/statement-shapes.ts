import { LRUCache } from 'lru-cache';
import type { Db } from './connect.ts';

/** What postgres.js keeps on a statement once it has built it to send: its text and its values, in order. */
interface Built {
  string?: unknown;
  parameters?: unknown;
}

/** A statement's text and values as built once, and where each slot's value sits among them. */
interface Shape {
  string: string;
  parameters: unknown[];
  slots: (readonly [index: number, name: string])[];
}

let checking = false;

/**
 * Turned on for the tests (test/setup/per-file.ts): every statement is built afresh and compared
 * with what its remembered shape would have sent, so a builder that starts to depend on something
 * neither its key nor its slots name fails there instead of reading another ticket's rows.
 */
export function checkStatementShapes(on: boolean): void {
  checking = on;
}

/**
 * Statements built once per shape. A large read (the ticket page: 22 KB of SQL composed of some
 * hundred fragments, visibility included) cost the web process half a millisecond per request to
 * compose: postgres.js makes an object per fragment and joins the text again on every call, then
 * hashes it to find the prepared statement. Everything such a statement depends on is either in
 * `key` (the caller's rights, anything that changes its text) or a `slot` (a value that changes per
 * call, such as the ticket's id); the first call builds it with postgres.js and keeps its text and
 * values, later calls with the same key send the same text with the slots' values put in, through
 * `sql.unsafe` as the same prepared statement. A slot's value must be one no other value of the
 * statement equals (an id: it is found among the values by equality).
 *
 * Relies on postgres.js's `string` and `parameters` of a sent query (3.4): when they are missing
 * nothing is remembered and every call builds, as before.
 */
export class StatementShapes {
  private readonly shapes: LRUCache<string, Shape>;

  constructor(max = 200) {
    this.shapes = new LRUCache({ max });
  }

  async run<S extends Record<string, string>, Q extends object, T>(
    sql: Db,
    key: string,
    slots: S,
    build: (slots: S) => Q,
    send: (query: Q) => Promise<T>,
  ): Promise<T> {
    const shape = this.shapes.get(key);
    if (shape && !checking) return send(sql.unsafe(shape.string, withSlots(shape, slots) as never[], { prepare: true }) as unknown as Q);
    const query = build(slots);
    const result = await send(query);
    const { string, parameters } = query as unknown as Built;
    if (typeof string !== 'string' || !Array.isArray(parameters)) return result;
    if (shape) {
      if (string !== shape.string || !sameValues(parameters, withSlots(shape, slots))) {
        throw new Error(`The statement of shape ${key} changed with values its key and slots do not name`);
      }
    } else {
      const found = parameters.flatMap((v, i) => Object.entries(slots).flatMap(([name, value]) => (v === value ? [[i, name] as const] : [])));
      this.shapes.set(key, { string, parameters: [...parameters], slots: found });
    }
    return result;
  }
}

function withSlots(shape: Shape, slots: Record<string, string>): unknown[] {
  const values = [...shape.parameters];
  for (const [i, name] of shape.slots) values[i] = slots[name];
  return values;
}

const sameValues = (a: unknown[], b: unknown[]) => a.length === b.length && a.every((v, i) => JSON.stringify(v) === JSON.stringify(b[i]));

import { z } from 'zod';

/** Both ways assignable: `unknown` (no constraint) when A and B are the same type, else `never`. */
type Exact<A, B> = [A] extends [B] ? ([B] extends [A] ? unknown : never) : never;

/**
 * Ties a response schema to the core interface it describes: `describing<TicketSummary>()(schema)`
 * fails to compile when the schema's output type and the interface differ, so the schema the
 * OpenAPI document publishes cannot drift from what the operation is typed to return (the
 * response-validation hook of the HTTP tests checks the values themselves).
 */
export function describing<T>() {
  return <S extends z.ZodType>(schema: S & Exact<z.output<S>, T>): S => schema;
}

/** Response fields: ids and datetimes as the core writes them (validated by format in the document). */
export const uuidOut = z.uuid();
export const dateTimeOut = z.iso.datetime().describe('ISO 8601 UTC with milliseconds.');
export const dateOut = z.iso.date();

/** `{ ok: true }`: the answer of a write with nothing else to say. */
export const okSchema = z.object({ ok: z.literal(true) }).meta({ id: 'Ok' });

/** `{ id }`: the answer of a write that made or changed one row (time entries). */
export const idSchema = z.object({ id: uuidOut }).meta({ id: 'Id' });

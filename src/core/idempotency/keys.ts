import { createHash } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { z } from 'zod';
import type { Db } from '../../db/connect.ts';
import { AppError, conflict, invalid } from '../errors.ts';

/** How long a stored response answers replays of its key. */
export const IDEMPOTENCY_TTL_HOURS = 24;
/** How long a replay waits for the first request with its key to finish before answering 409. */
const WAIT_FOR_FIRST_MS = 30_000;

/**
 * 1 to 255 printable ASCII characters (space to tilde), as an HTTP header can carry them. A
 * refinement rather than a regex pattern, and a terse description: MCP lists this schema on every
 * write tool, and tools/list has a size budget.
 */
export const idempotencyKeySchema = z
  .string()
  .refine((k) => /^[\x20-\x7e]{1,255}$/.test(k), 'An idempotency key is 1 to 255 printable ASCII characters.')
  .describe('Retry key: a repeat within 24 h with the same arguments returns the first result.');

/** The Idempotency-Key header, checked: a key that is not 1-255 printable ASCII characters is 400. */
export function parseIdempotencyKey(raw: string): string {
  const parsed = idempotencyKeySchema.safeParse(raw);
  if (!parsed.success) {
    throw invalid('bad_idempotency_key', { field: 'Idempotency-Key' }, 'Idempotency-Key must be 1 to 255 printable ASCII characters.');
  }
  return parsed.data;
}

/** What a request was: a replay must match it exactly (REST: method, path and body; MCP: tool and arguments). */
export function fingerprintOf(...parts: string[]): Buffer {
  const h = createHash('sha256');
  for (const part of parts) h.update(part).update('\0');
  return h.digest();
}

/** A final response, as stored and replayed. `body` is the JSON text exactly as it was sent. */
export interface StoredResponse {
  status: number;
  body: string | null;
  headers: Record<string, string>;
}

export interface IdempotencyClaim {
  tokenId: string;
  key: string;
  fingerprint: Buffer;
}

export interface IdempotentOutcome {
  response: StoredResponse;
  /** True when the response comes from the store and nothing ran. */
  replayed: boolean;
}

/** Thrown inside the transaction to undo what it did; carries what to answer. */
class Undo {
  constructor(readonly response: StoredResponse) {}
}

/** Another request holds the key right now. */
class Busy {}

export const idempotencyMismatch = () =>
  new AppError('idempotency_mismatch', 'This Idempotency-Key was used with a different request.', { reason: 'idempotency_mismatch' });

/**
 * Runs a request at most once per (token, key) within 24 hours.
 *
 * One transaction holds everything: the key's row, the request's own writes (`run` receives the
 * transaction; the core operations join it) and the stored response. So a crash, a 5xx or a
 * lost connection leaves no trace and a retry runs afresh, while a committed write always has its
 * response stored beside it. A transaction-scoped advisory lock on the key makes a concurrent
 * duplicate wait (polling, so that waiters hold no connection) until the first commits, and then
 * replay it. A response under 400 is stored with the writes; 4xx is stored with the writes of
 * `run` rolled back (to a savepoint); 5xx is not stored and releases the key.
 */
export async function runIdempotent(sql: Db, claim: IdempotencyClaim, now: Date, run: (sql: Db) => Promise<StoredResponse>): Promise<IdempotentOutcome> {
  const deadline = Date.now() + WAIT_FOR_FIRST_MS;
  for (let pause = 10; ; pause = Math.min(pause * 2, 200)) {
    try {
      return await attempt(sql, claim, now, run);
    } catch (err) {
      if (err instanceof Undo) return { response: err.response, replayed: false };
      if (!(err instanceof Busy)) throw err;
      if (Date.now() > deadline) {
        throw conflict('idempotency_in_progress', undefined, 'A request with this Idempotency-Key is still running; retry later.');
      }
      await sleep(pause);
    }
  }
}

async function attempt(sql: Db, claim: IdempotencyClaim, now: Date, run: (sql: Db) => Promise<StoredResponse>): Promise<IdempotentOutcome> {
  const expiresAt = new Date(now.getTime() + IDEMPOTENCY_TTL_HOURS * 3600_000);
  return (await sql.begin(async (t) => {
    const [lock] = await t<{ mine: boolean }[]>`
      select pg_try_advisory_xact_lock(hashtextextended(${'wt:idempotency:' + claim.tokenId + ':' + claim.key}::text, 0)) as mine`;
    if (!lock!.mine) throw new Busy();
    // an expired row is taken over as if it were absent (the cleanup task may not have run yet)
    const [claimed] = await t`
      insert into idempotency_keys (token_id, key, fingerprint, status, body, headers, created_at, expires_at)
      values (${claim.tokenId}::uuid, ${claim.key}, ${claim.fingerprint}, null, null, '{}'::jsonb, ${now}, ${expiresAt})
      on conflict (token_id, key) do update
        set fingerprint = excluded.fingerprint, status = null, body = null, headers = '{}'::jsonb,
            created_at = excluded.created_at, expires_at = excluded.expires_at
        where idempotency_keys.expires_at <= ${now}
      returning 1 as one`;
    if (!claimed) return replay(t as unknown as Db, claim);

    let response: StoredResponse | null = null;
    try {
      await t.savepoint(async (s) => {
        response = await run(s as unknown as Db);
        if (response.status >= 400) throw new Undo(response);
      });
    } catch (err) {
      if (!(err instanceof Undo)) throw err;
      if (err.response.status >= 500) throw err;
    }
    const r = response as unknown as StoredResponse;
    await t`
      update idempotency_keys set status = ${r.status}, body = ${r.body}, headers = ${t.json(r.headers)}
      where token_id = ${claim.tokenId}::uuid and key = ${claim.key}`;
    return { response: r, replayed: false };
  })) as IdempotentOutcome;
}

async function replay(sql: Db, claim: IdempotencyClaim): Promise<IdempotentOutcome> {
  const [row] = await sql<{ fingerprint: Buffer; status: number; body: string | null; headers: Record<string, string> }[]>`
    select fingerprint, status, body, headers from idempotency_keys where token_id = ${claim.tokenId}::uuid and key = ${claim.key}`;
  if (!row!.fingerprint.equals(claim.fingerprint)) throw idempotencyMismatch();
  return { response: { status: row!.status, body: row!.body, headers: row!.headers }, replayed: true };
}

/** The cron task `limits:cleanup` (with the rate-limit counters'): idempotency keys past their 24 hours. */
export async function deleteExpiredIdempotencyKeys(sql: Db): Promise<number> {
  return (await sql`delete from idempotency_keys where expires_at < now()`).count;
}

import type { Principal } from '../auth/principal.ts';
import type { Ctx } from '../ctx.ts';
import type { Fragment } from '../tickets/summary.ts';
import type { Answer } from './answers.ts';

/** The read mark of changes that belong to no workspace (identities), read beside the workspace's. */
const GLOBAL_KEY = '00000000-0000-0000-0000-000000000000';

/**
 * The caller's workspace's read mark (sql/098_read_marks.sql) and the global one, as text, read
 * in the statement's snapshot: it changes with every commit touching what a board or "my work" shows.
 * A table those statements come to read needs the same triggers (a migration) and a case in
 * test/board-remembered.test.ts, or its changes would not be seen.
 */
export function readMarkSql(ctx: Ctx): Fragment {
  const { sql, principal: p } = ctx;
  return sql`(coalesce((select m.n from read_marks m where m.workspace_id = ${p.workspaceId}::uuid), 0)::text || '.'
              || coalesce((select m.n from read_marks m where m.workspace_id = ${GLOBAL_KEY}::uuid), 0)::text)`;
}

/**
 * Everything of the caller a read's SQL may depend on: the whole principal but for what only
 * names the credential or the door (token, session, re-authentication time, source), so every
 * token and session of one person with the same rights shares the answers.
 */
export function callerKey(p: Principal): string {
  const { tokenId: _t, sessionId: _s, reauthAt: _r, via: _v, source: _o, door: _d, scopes, projectIds, flags, ...rest } = p;
  return JSON.stringify({
    ...rest,
    scopes: [...scopes].sort(),
    projectIds: projectIds ? [...projectIds].sort() : null,
    flags: flags ? [...flags].sort() : null,
  });
}

/**
 * A freshly computed answer (JSON bytes, core/json-text.ts, and what `Answer.tag` keeps beside
 * them) and the read mark its statement saw (null: do not remember it).
 */
export interface Fresh extends Answer {
  mark: string | null;
}

/** `rememberedAnswer`'s bytes: for reads that keep nothing beside them. */
export async function remembered(
  ctx: Ctx,
  name: string,
  input: unknown,
  compute: (markSql: Fragment | null) => Promise<Fresh>,
  extra?: Fragment,
): Promise<Buffer> {
  return (await rememberedAnswer(ctx, name, input, compute, extra)).body;
}

/**
 * The answer of read `name` for this caller and `input`: from this process's memory when the
 * read mark (with `extra`, more of the key computed in SQL, such as the caller's today or the
 * ticket's own mark) is the one it was computed under, else `compute`d afresh. `compute` receives
 * the mark's SQL to select in its first statement, so the answer is remembered under the mark of
 * a snapshot no later than any it read: a change committed between the look-up and the read only
 * makes the next request read again. Costs one small statement per request that has an answer to
 * compare (none for a key never answered here, or whose answer was pushed out); without process
 * caches (one-off commands, tests' contexts) or inside a transaction (it may hold uncommitted
 * changes) it only computes. While the mark keeps moving (the last look-up found the answer stale,
 * or the last read found the mark moved since the one before: `ReadAnswers.moving`), the look-up is
 * skipped: it would find the answer stale again, so a read costs its own statement alone, as
 * without memory; a read that finds the mark where it was turns the look-ups back on.
 */
export async function rememberedAnswer(
  ctx: Ctx,
  name: string,
  input: unknown,
  compute: (markSql: Fragment | null) => Promise<Fresh>,
  extra?: Fragment,
): Promise<Answer> {
  const memory = remembering(ctx, name, input, extra);
  if (!memory) return compute(null);
  // nothing remembered for this key (a first read, or pushed out): no mark to compare with
  if (memory.known() && !memory.moving()) {
    const [{ mark }] = await ctx.sql<[{ mark: string }]>`select ${memory.markSql} as mark`;
    const hit = memory.get(mark);
    if (hit !== undefined) return hit;
  }
  const { mark, ...fresh } = await compute(memory.markSql);
  memory.set(mark, fresh);
  return fresh;
}

/** One read's place in this process's memory (`remembering`). */
export interface Remembering {
  /** The read mark's SQL (with the read's `extra`), to select in the read's first statement. */
  markSql: Fragment;
  /** Whether an answer is remembered for this read under any mark. */
  known(): boolean;
  /** Whether this read's mark had moved when it was last read (`ReadAnswers.moving`). */
  moving(): boolean;
  /** The answer remembered under exactly `mark`. */
  get(mark: string | null | undefined): Answer | undefined;
  /** Remembers `answer` under `mark` (null: not). */
  set(mark: string | null | undefined, answer: Answer): void;
}

/**
 * The memory of read `name` for this caller and `input`, for a read that selects the mark in a
 * statement it sends anyway, before it knows whether the answer is remembered (the ticket page:
 * its facts, which a current If-None-Match needs alone): a remembered answer costs that statement,
 * one read afresh no more statements than without memory. Null without process caches or inside
 * a transaction (`rememberedAnswer`).
 */
export function remembering(ctx: Ctx, name: string, input: unknown, extra?: Fragment): Remembering | null {
  const answers = ctx.caches?.readAnswers;
  if (!answers || ctx.inTx) return null;
  const { sql } = ctx;
  const key = `${name}|${callerKey(ctx.principal)}|${JSON.stringify(input)}`;
  return {
    markSql: extra ? sql`(${readMarkSql(ctx)} || '|' || ${extra}::text)` : readMarkSql(ctx),
    known: () => answers.has(key),
    moving: () => answers.moving(key),
    get: (mark) => (mark == null ? undefined : answers.get(key, mark)),
    set: (mark, answer) => {
      if (mark != null) answers.set(key, mark, answer);
    },
  };
}

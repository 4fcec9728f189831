import type { Principal } from '../auth/principal.ts';
import type { Ctx } from '../ctx.ts';
import type { Db } from '../../db/connect.ts';

type Fragment = ReturnType<Db>;

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
function callerKey(p: Principal): string {
  const { tokenId: _t, sessionId: _s, reauthAt: _r, via: _v, source: _o, door: _d, scopes, projectIds, flags, ...rest } = p;
  return JSON.stringify({
    ...rest,
    scopes: [...scopes].sort(),
    projectIds: projectIds ? [...projectIds].sort() : null,
    flags: flags ? [...flags].sort() : null,
  });
}

/**
 * What `compute` receives: the read mark's SQL, to select in the same statement as the answer, and
 * the mark of the answer remembered for this key (null when none). The statement computes its answer
 * only when the mark it reads is another (`gateSql`), and says so by returning that mark alone.
 */
export interface Gate {
  markSql: Fragment;
  known: string | null;
}

/**
 * A computed answer (JSON bytes, core/json-text.ts) and the read mark its statement saw (null: do not
 * remember it); or, when the statement read the known mark, no answer: the remembered one stands.
 */
export type Fresh = { body: Buffer; mark: string | null } | { unchanged: true };

/**
 * The condition under which a gated statement computes its answer: its read mark (`read_mark`, selected
 * by the statement from `gate.markSql`) is not the known one. Written where it is a one-time filter (no
 * column of the rows it gates), PostgreSQL evaluates it once and runs nothing below it when it is false.
 */
export function gateSql(ctx: Ctx, gate: Gate | null, mark: Fragment): Fragment {
  return gate ? ctx.sql`${mark} is distinct from ${gate.known}::text` : ctx.sql`true`;
}

/**
 * The answer of read `name` for this caller and `input`: from this process's memory when the
 * read mark (with `extra`, more of the key computed in SQL, such as the caller's today) is the one
 * it was computed under, else `compute`d afresh. One statement either way: `compute` selects the
 * mark with the answer and computes the answer only when the mark is not the remembered answer's
 * (`Gate`); the answer is remembered under the mark of its own snapshot, so a change committed
 * meanwhile only makes the next request read again. Without process caches (one-off commands,
 * tests' contexts) or inside a transaction (it may hold uncommitted changes) it only computes.
 */
export async function remembered(ctx: Ctx, name: string, input: unknown, compute: (gate: Gate | null) => Promise<Fresh>, extra?: Fragment): Promise<Buffer> {
  const answers = ctx.caches?.readAnswers;
  if (!answers || ctx.inTx) return bodyOf(await compute(null));
  const { sql } = ctx;
  const markSql: Fragment = extra ? sql`(${readMarkSql(ctx)} || '|' || ${extra}::text)` : readMarkSql(ctx);
  const key = `${name}|${callerKey(ctx.principal)}|${JSON.stringify(input)}`;
  const known = answers.markOf(key);
  const fresh = await compute({ markSql, known });
  if ('unchanged' in fresh) {
    const hit = known === null ? undefined : answers.get(key, known);
    if (hit !== undefined) return hit;
    // pushed out (or replaced by a newer answer) since its mark was looked at: computed again
    return answerOf(answers, key, await compute({ markSql, known: null }));
  }
  return answerOf(answers, key, fresh);
}

function answerOf(answers: NonNullable<Ctx['caches']>['readAnswers'], key: string, fresh: Fresh): Buffer {
  const body = bodyOf(fresh);
  if (!('unchanged' in fresh) && fresh.mark !== null) answers.set(key, fresh.mark, body);
  return body;
}

function bodyOf(fresh: Fresh): Buffer {
  if ('unchanged' in fresh) throw new Error('a statement without a known mark answered "unchanged"');
  return fresh.body;
}

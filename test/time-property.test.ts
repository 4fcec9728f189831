import { runOp } from '../src/core/operation.ts';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Principal } from '../src/core/auth/principal.ts';
import type { Ctx } from '../src/core/ctx.ts';
import { isAppError } from '../src/core/errors.ts';
import { closePeriod, reopenPeriod } from '../src/core/periods/manage.ts';
import { correctTime } from '../src/core/time/correct.ts';
import { addDays } from '../src/core/time/dates.ts';
import { deleteTime } from '../src/core/time/delete.ts';
import { editTime } from '../src/core/time/edit.ts';
import { logTime } from '../src/core/time/log.ts';
import type { Db } from '../src/db/connect.ts';
import { startTestApp, type TestApp } from './helpers/app.ts';
import { billEntry, makeClient, makePeriod, makeProject, makeTicket, makeUser, makeWorkspace, type Person, type Workspace } from './helpers/factories.ts';

/**
 * Any sequence of log / edit / correct / delete / close / reopen operations, with some entries
 * marked billed directly in SQL, keeps the invariants of time tracking:
 * - an entry in a closed period keeps its work facts; a billed entry does not change at all;
 * - the running net of an entry and its corrections never goes below zero;
 * - every entry lies in the period that holds its date; a correction shares its original's
 *   author and attribution, and corrects an original (never another correction).
 */

let app: TestApp;
const NOW = new Date('2024-04-15T12:00:00Z');

beforeAll(async () => {
  app = await startTestApp({ now: () => NOW });
});
afterAll(() => app.close());

type Actor = 'member-token' | 'member-session' | 'admin-session' | 'admin-token';
type Op =
  | { kind: 'log'; actor: Actor; day: number; minutes: number }
  | { kind: 'edit'; actor: Actor; pick: number; minutes?: number; day?: number; note?: string; billable?: boolean }
  | { kind: 'correct'; actor: Actor; pick: number; minutes: number }
  | { kind: 'delete'; actor: Actor; pick: number }
  | { kind: 'close' | 'reopen'; period: number }
  | { kind: 'bill'; pick: number };

const actor = fc.constantFrom<Actor>('member-token', 'member-session', 'admin-session', 'admin-token');
const day = fc.integer({ min: -5, max: 140 }); // days after 2024-01-01: a little before the first period, into May
const minutes = fc.integer({ min: -200, max: 200 }).filter((m) => m !== 0);
const op: fc.Arbitrary<Op> = fc.oneof(
  { weight: 4, arbitrary: fc.record({ kind: fc.constant('log' as const), actor, day, minutes: fc.integer({ min: 1, max: 300 }) }) },
  {
    weight: 3,
    arbitrary: fc.record(
      { kind: fc.constant('edit' as const), actor, pick: fc.nat(), minutes, day, note: fc.string({ maxLength: 5 }), billable: fc.boolean() },
      { requiredKeys: ['kind', 'actor', 'pick'] },
    ),
  },
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant('correct' as const),
      actor: fc.constantFrom<Actor>('admin-session', 'admin-session', 'admin-session', 'member-session'),
      pick: fc.nat(),
      minutes,
    }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('delete' as const), actor, pick: fc.nat() }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constantFrom('close' as const, 'reopen' as const), period: fc.nat({ max: 3 }) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('bill' as const), pick: fc.nat() }) },
);

interface World {
  ws: Workspace;
  member: Person;
  admin: Person;
  ticketId: string;
  periods: string[];
}

async function world(sql: Db): Promise<World> {
  const ws = await makeWorkspace(sql);
  const member = await makeUser(sql, ws, { role: 'member' });
  const admin = await makeUser(sql, ws, { role: 'admin' });
  const client = await makeClient(sql, ws);
  const project = await makeProject(sql, ws, { billingClientId: client.id, members: [{ person: member, access: 'limited' }] });
  const ticket = await makeTicket(sql, ws, { projectId: project.id });
  const periods: string[] = [];
  for (const [start, end] of [
    ['2024-01-01', '2024-01-31'],
    ['2024-02-01', '2024-02-29'],
    ['2024-03-01', '2024-03-31'],
    ['2024-04-01', '2024-04-30'],
  ]) {
    periods.push((await makePeriod(sql, ws, { start: start!, end: end! })).id);
  }
  return { ws, member, admin, ticketId: ticket.id, periods };
}

function ctxFor(sql: Db, w: World, a: Actor): Ctx {
  const who = a.startsWith('admin') ? w.admin : w.member;
  const via = a.endsWith('session') ? 'session' : 'token';
  const principal: Principal = {
    workspaceId: w.ws.id,
    slug: w.ws.slug,
    identityId: who.id,
    name: who.email,
    role: who.role,
    clientId: null,
    via,
    scopes: new Set(['read', 'write']),
    projectIds: null,
    tokenId: null,
    tokenKind: via === 'token' ? 'delegated' : null,
    sessionId: null,
    reauthAt: null,
    source: via === 'token' ? 'api' : 'ui',
    door: 'rest',
  };
  return { sql, principal, now: () => NOW };
}

interface Row {
  id: string;
  user_id: string;
  project_id: string;
  billing_client_id: string | null;
  category_id: string | null;
  ticket_id: string;
  period_id: string;
  spent_on: string;
  started_at: string | null;
  minutes: number;
  note: string | null;
  billable: boolean;
  corrects_entry_id: string | null;
  billed: boolean;
  closed: boolean;
  in_period: boolean;
}

const snapshot = (sql: Db, w: World) => sql<Row[]>`
  select e.id, e.user_id, e.project_id, e.billing_client_id, e.category_id, e.ticket_id, e.period_id, e.spent_on::text as spent_on,
         e.started_at::text as started_at, e.minutes, e.note, e.billable, e.corrects_entry_id, e.billed,
         p.closed_at is not null as closed, e.spent_on between p.period_start and p.period_end as in_period
  from time_entries e join periods p on p.id = e.period_id
  where e.workspace_id = ${w.ws.id} order by e.created_at, e.id`;

const workFacts = (r: Row) => [r.spent_on, r.started_at, r.minutes, r.note, r.period_id, r.corrects_entry_id, r.user_id, r.ticket_id];

async function apply(sql: Db, w: World, o: Op, rows: Row[]): Promise<void> {
  const pick = (n: number) => rows[n % rows.length]?.id;
  const date = (d: number) => addDays('2024-01-01', d);
  switch (o.kind) {
    case 'log':
      await runOp(logTime, ctxFor(sql, w, o.actor), { ticketId: w.ticketId, spentOn: date(o.day), minutes: o.minutes });
      return;
    case 'edit': {
      const id = pick(o.pick);
      if (!id) return;
      const body = { minutes: o.minutes, spentOn: o.day === undefined ? undefined : date(o.day), note: o.note, billable: o.billable };
      await runOp(editTime, ctxFor(sql, w, o.actor), { ...body, id });
      return;
    }
    case 'correct': {
      const id = pick(o.pick);
      if (id) await runOp(correctTime, ctxFor(sql, w, o.actor), { id, minutes: o.minutes });
      return;
    }
    case 'delete': {
      const id = pick(o.pick);
      if (id) await runOp(deleteTime, ctxFor(sql, w, o.actor), { id });
      return;
    }
    case 'close':
      await runOp(closePeriod, ctxFor(sql, w, 'admin-session'), { id: w.periods[o.period]! });
      return;
    case 'reopen':
      await runOp(reopenPeriod, ctxFor(sql, w, 'admin-session'), { id: w.periods[o.period]! });
      return;
    case 'bill': {
      // a billing run allocates entries of closed periods only
      const candidates = rows.filter((r) => r.closed && !r.billed);
      const id = candidates[o.pick % Math.max(candidates.length, 1)]?.id;
      if (id) await billEntry(sql, w.ws, id);
      return;
    }
  }
}

function checkInvariants(before: Row[], after: Row[], o: Op, w: World): void {
  const now = new Map(after.map((r) => [r.id, r]));
  const reopened = o.kind === 'reopen' ? w.periods[o.period] : null;
  for (const b of before) {
    const a = now.get(b.id);
    if (b.billed) expect(a, 'a billed entry is never deleted or changed').toEqual(b);
    else if (b.closed && b.period_id !== reopened) {
      expect(a, 'an entry of a closed period is never deleted').toBeDefined();
      expect(workFacts(a!), 'an entry of a closed period keeps its work facts').toEqual(workFacts(b));
    }
  }
  const nets = new Map<string, number>();
  for (const r of after) {
    expect(r.in_period, 'an entry lies in the period of its date').toBe(true);
    const root = r.corrects_entry_id ?? r.id;
    nets.set(root, (nets.get(root) ?? 0) + r.minutes);
    if (r.corrects_entry_id) {
      const original = now.get(r.corrects_entry_id);
      expect(original, 'a correction has its original').toBeDefined();
      expect(original!.corrects_entry_id, 'a correction corrects an original').toBeNull();
      const attribution = (x: Row) => [x.user_id, x.ticket_id, x.project_id, x.billing_client_id, x.category_id, x.billable];
      expect(attribution(r), 'a correction shares its original’s author, attribution and billable flag').toEqual(attribution(original!));
    } else {
      expect(r.minutes, 'only corrections are negative').toBeGreaterThan(0);
    }
  }
  for (const [root, net] of nets) expect(net, `net of ${root}`).toBeGreaterThanOrEqual(0);
}

describe('time invariants under any sequence of operations', () => {
  it('hold after every operation', async () => {
    const sql = app.db.sql;
    await fc.assert(
      fc.asyncProperty(fc.array(op, { minLength: 5, maxLength: 40, size: 'medium' }), async (ops) => {
        const w = await world(sql);
        let rows = await snapshot(sql, w);
        for (const o of ops) {
          try {
            await apply(sql, w, o, rows);
          } catch (err) {
            // refusals are expected; anything that is not one of ours would be a 500
            if (!isAppError(err) && (err as { name?: string }).name !== 'ZodError') throw err;
          }
          const after = await snapshot(sql, w);
          checkInvariants(rows, after, o, w);
          rows = after;
        }
      }),
      { numRuns: 30 },
    );
  });
});

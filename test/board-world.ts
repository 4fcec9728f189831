import type { Scope } from '../src/core/auth/principal.ts';
import { startTestApp, type TestApp } from './helpers/app.ts';
import {
  addLabels,
  addViewers,
  makeBank,
  makeClient,
  makeProject,
  makeTicket,
  makeToken,
  makeUser,
  makeWorkspace,
  workflowIds,
  type Person,
  type WorkflowIds,
  type Workspace,
} from './helpers/factories.ts';

/**
 * A workspace whose tickets cover every board filter, described in JavaScript as well (`tickets`),
 * so tests derive what each filter must return from the fixture itself. The clock is fixed at
 * 2030-03-10 20:00 UTC; the owner's timezone is UTC.
 */
export const NOW = new Date('2030-03-10T20:00:00.000Z');
const DAY = 86_400_000;

/** Workflow order after the world rearranges it (a new state, triage moved last). */
export const STATE_ORDER = ['todo', 'blocked', 'in_progress', 'in_review', 'done', 'cancelled', 'triage'];
export const CLOSED = new Set(['done', 'cancelled']);
export const PRIORITY_POSITION: Record<string, number> = { urgent: 0, high: 1, normal: 2, low: 3 };
const KINDS = ['request', 'bug', 'feature', 'task'];
const PRIORITIES = ['urgent', 'high', 'normal', 'low'];
export const BANK = '0b7c2a4e-5d6f-4a8b-9c0d-1e2f3a4b5c6d';

export interface Fixture {
  id: string;
  humanId: string;
  title: string;
  projectId: string | null;
  state: string;
  kind: string;
  priority: string;
  assigneeId: string | null;
  reporterId: string | null;
  billingClientId: string | null;
  bank: boolean;
  /** YYYY-MM-DD or null. */
  due: string | null;
  labels: string[];
  viewers: string[];
  archived: boolean;
  updatedAt: Date;
}

export interface BoardWorld {
  app: TestApp;
  ws: Workspace;
  wf: WorkflowIds;
  owner: Person;
  member: Person;
  clientUser: Person;
  clientA: { id: string };
  freeClient: { id: string };
  p1: { id: string; key: string };
  p2: { id: string; key: string };
  tickets: Fixture[];
  ownerToken: string;
  token: (who: Person, opts?: { scopes?: Scope[]; projectIds?: string[] }) => Promise<string>;
}

const dateOf = (ms: number) => new Date(ms).toISOString().slice(0, 10);

export async function boardWorld(n = 42): Promise<BoardWorld> {
  const app = await startTestApp({ now: () => NOW });
  const sql = app.db.sql;
  const ws = await makeWorkspace(sql);
  await sql`insert into workflow_states (workspace_id, key, name, category, position) values (${ws.id}, 'blocked', 'Blocked', 'open', 1)`;
  for (const [i, key] of STATE_ORDER.entries()) await sql`update workflow_states set position = ${i} where workspace_id = ${ws.id} and key = ${key}`;
  const wf = await workflowIds(sql, ws);
  const owner = await makeUser(sql, ws, { role: 'owner' });
  const member = await makeUser(sql, ws, { role: 'member' });
  const clientA = await makeClient(sql, ws);
  const freeClient = await makeClient(sql, ws);
  await sql`update clients set billing_policy = 'free' where id = ${freeClient.id}`;
  const clientUser = await makeUser(sql, ws, { role: 'client', clientId: clientA.id });
  const p1 = await makeProject(sql, ws, { billingClientId: clientA.id, members: [{ person: member }] });
  const p2 = await makeProject(sql, ws, { billingClientId: freeClient.id });

  const tickets: Fixture[] = [];
  for (let i = 0; i < n; i++) {
    const projectId = [p1.id, p2.id, null][i % 3]!;
    const f: Omit<Fixture, 'id' | 'humanId'> = {
      title: i % 5 === 0 ? `Alpha ticket ${i}` : `Ticket ${i}`,
      projectId,
      state: STATE_ORDER[(i * 5) % STATE_ORDER.length]!,
      kind: KINDS[Math.floor(i / 3) % 4]!,
      priority: PRIORITIES[Math.floor(i / 2) % 4]!,
      assigneeId: [member.id, owner.id, null, null][i % 4]!,
      reporterId: [clientUser.id, owner.id, member.id, null, null][i % 5]!,
      billingClientId: projectId === null || i % 7 === 3 ? null : projectId === p1.id ? clientA.id : freeClient.id,
      bank: i === 9,
      due: [dateOf(NOW.getTime() - 3 * DAY), dateOf(NOW.getTime()), dateOf(NOW.getTime() + 6 * DAY), dateOf(NOW.getTime() + 7 * DAY), null, null][i % 6]!,
      labels: [['frontend'], ['backend', 'design'], [], []][i % 4]!,
      viewers: i % 9 === 2 ? [member.id] : i % 9 === 4 ? [clientUser.id] : [],
      archived: i % 13 === 12,
      updatedAt: new Date(NOW.getTime() - (n - i) * 60_000),
    };
    const t = await makeTicket(sql, ws, {
      projectId: f.projectId,
      title: f.title,
      stateKey: f.state,
      kindKey: f.kind,
      priorityKey: f.priority,
      assigneeId: f.assigneeId,
      reporterId: f.reporterId,
      billingClientId: f.billingClientId,
      dueDate: f.due,
      archived: f.archived,
      updatedAt: f.updatedAt,
    });
    if (f.labels.length) await addLabels(sql, ws, t.id, f.labels);
    if (f.viewers.length) await addViewers(sql, t.id, f.viewers);
    if (f.bank) {
      const [exists] = await sql`select 1 from banks where id = ${BANK}`;
      if (!exists) await makeBank(sql, ws, { clientId: clientA.id, id: BANK });
      await sql`update tickets set billing_policy = ${`bank:${BANK}`} where id = ${t.id}`;
    }
    tickets.push({ ...f, id: t.id, humanId: t.humanId });
  }
  const token = async (who: Person, opts: { scopes?: Scope[]; projectIds?: string[] } = {}) => (await makeToken(sql, ws, who, opts)).token;
  return { app, ws, wf, owner, member, clientUser, clientA, freeClient, p1, p2, tickets, ownerToken: await token(owner), token };
}

/** Board order: priority position ascending, then most recent activity, then id descending. */
export function boardSort(a: Fixture, b: Fixture): number {
  return (
    PRIORITY_POSITION[a.priority]! - PRIORITY_POSITION[b.priority]! || b.updatedAt.getTime() - a.updatedAt.getTime() || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0)
  );
}

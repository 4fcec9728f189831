import type { Scope } from '../src/core/auth/principal.ts';
import { login, startTestApp, type CallResult, type SessionCookie, type TestApp } from './helpers/app.ts';
import { makeClient, makePeriod, makeProject, makeTicket, makeToken, makeUser, makeWorkspace, type Person, type Workspace } from './helpers/factories.ts';

/**
 * The people, clients, projects, tickets and periods the time tests share. The clock is
 * fixed at 2024-05-15 12:00 UTC unless a test moves it; March and April 2024 are closed
 * periods, May is open.
 */
export interface TimeWorld {
  app: TestApp;
  ws: Workspace;
  clock: { now: Date };
  owner: Person;
  admin: Person;
  member: Person;
  limited: Person;
  outsider: Person;
  client: Person;
  elevated: Person;
  clients: { main: string; collab: string; other: string };
  project: { id: string; key: string };
  ticket: { id: string; humanId: string };
  inbox: { id: string; humanId: string };
  periods: { march: string; april: string; may: string };
  token: (who: Person, scopes?: Scope[]) => Promise<string>;
  session: (who: Person) => Promise<SessionCookie>;
}

export const START = new Date('2024-05-15T12:00:00.000Z');

export async function timeWorld(): Promise<TimeWorld> {
  const clock = { now: new Date(START) };
  const app = await startTestApp({ now: () => clock.now });
  const sql = app.db.sql;
  const ws = await makeWorkspace(sql);
  const main = (await makeClient(sql, ws, { name: 'Main client' })).id;
  const collab = (await makeClient(sql, ws, { name: 'Collaborator' })).id;
  const other = (await makeClient(sql, ws, { name: 'Unrelated' })).id;
  const owner = await makeUser(sql, ws, { role: 'owner', name: 'Olivia Owner' });
  const admin = await makeUser(sql, ws, { role: 'admin', name: 'Adam Admin' });
  const member = await makeUser(sql, ws, { role: 'member', name: 'Mia Member' });
  const limited = await makeUser(sql, ws, { role: 'member', name: 'Lee Limited' });
  const outsider = await makeUser(sql, ws, { role: 'member', name: 'Otto Outsider' });
  const client = await makeUser(sql, ws, { role: 'client', clientId: main });
  const elevated = await makeUser(sql, ws, { role: 'client_elevated', clientId: main });
  const project = await makeProject(sql, ws, {
    billingClientId: main,
    collaboratorIds: [collab],
    members: [
      { person: member, access: 'full' },
      { person: limited, access: 'limited' },
    ],
  });
  const ticket = await makeTicket(sql, ws, { projectId: project.id, title: 'Build the thing', reporterId: client.id });
  const inbox = await makeTicket(sql, ws, { projectId: null, title: 'Unrouted request' });
  const periods = {
    march: (await makePeriod(sql, ws, { start: '2024-03-01', end: '2024-03-31', closed: true, closedBy: owner.id })).id,
    april: (await makePeriod(sql, ws, { start: '2024-04-01', end: '2024-04-30', closed: true, closedBy: owner.id })).id,
    may: (await makePeriod(sql, ws, { start: '2024-05-01', end: '2024-05-31' })).id,
  };
  const tokens = new Map<string, string>();
  const sessions = new Map<string, SessionCookie>();
  return {
    app,
    ws,
    clock,
    owner,
    admin,
    member,
    limited,
    outsider,
    client,
    elevated,
    clients: { main, collab, other },
    project,
    ticket,
    inbox,
    periods,
    token: async (who, scopes = ['read', 'write']) => {
      const key = `${who.id}:${scopes.join(',')}`;
      if (!tokens.has(key)) tokens.set(key, (await makeToken(sql, ws, who, { scopes })).token);
      return tokens.get(key)!;
    },
    session: async (who) => {
      if (!sessions.has(who.id)) sessions.set(who.id, await login(app, who.email, who.password));
      return sessions.get(who.id)!;
    },
  };
}

/** Asserts the error envelope and returns the body's details for further checks. */
export function expectError(res: CallResult, status: number, code: string, reason?: string): Record<string, unknown> {
  if (res.status !== status || res.body?.error?.code !== code || (reason !== undefined && res.body.error.details?.reason !== reason)) {
    throw new Error(`expected ${status} ${code}${reason ? ` (${reason})` : ''}, got ${res.status} ${JSON.stringify(res.body)}`);
  }
  return res.body.error.details ?? {};
}

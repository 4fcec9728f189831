import { startTestApp, type TestApp } from './helpers/app.ts';
import { makeClient, makeUser, makeWorkspace, workflowIds, type Person, type WorkflowIds, type Workspace } from './helpers/factories.ts';

/** The cast the ticket write tests share: one workspace, three clients, and a person of each role. */
export interface TicketWorld {
  app: TestApp;
  ws: Workspace;
  wf: WorkflowIds;
  acme: { id: string };
  collab: { id: string };
  other: { id: string };
  owner: Person;
  member: Person;
  limited: Person;
  outsider: Person;
  agent: Person;
  clientUser: Person;
  clientElevated: Person;
  otherClientElevated: Person;
}

export async function ticketWorld(): Promise<TicketWorld> {
  const app = await startTestApp();
  const sql = app.db.sql;
  const ws = await makeWorkspace(sql);
  const wf = await workflowIds(sql, ws);
  const acme = await makeClient(sql, ws, { name: 'Acme' });
  const collab = await makeClient(sql, ws, { name: 'Collab' });
  const other = await makeClient(sql, ws, { name: 'Other' });
  return {
    app,
    ws,
    wf,
    acme,
    collab,
    other,
    owner: await makeUser(sql, ws, { role: 'owner' }),
    member: await makeUser(sql, ws, { role: 'member' }),
    limited: await makeUser(sql, ws, { role: 'member' }),
    outsider: await makeUser(sql, ws, { role: 'member' }),
    agent: await makeUser(sql, ws, { role: 'agent' }),
    clientUser: await makeUser(sql, ws, { role: 'client', clientId: acme.id }),
    clientElevated: await makeUser(sql, ws, { role: 'client_elevated', clientId: acme.id }),
    otherClientElevated: await makeUser(sql, ws, { role: 'client_elevated', clientId: other.id }),
  };
}

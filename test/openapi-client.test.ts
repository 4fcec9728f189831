import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import openapiTS, { astToString } from 'openapi-typescript';
import ts from 'typescript';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './helpers/app.ts';
import { checkResponse } from './helpers/openapi-check.ts';
import { makePeriod, makeProject, makeToken, makeUser, makeWorkspace, workflowIds, type WorkflowIds, type Workspace } from './helpers/factories.ts';

/**
 * Issue 15, "a generated client works": TypeScript types generated from the live document
 * (openapi-typescript), a client written against them (openapi-fetch) that must type-check with
 * the TypeScript compiler, and that same client code run against a running server: list, create,
 * update and move a ticket and log time, with an API token.
 */

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** The client code, type-checked against the generated `paths` and then run. */
const SCENARIO = `
import createClient, { type Middleware } from 'openapi-fetch';
import type { paths } from './api.ts';

export interface Ids { slug: string; projectA: string; projectB: string; doneState: string }

export async function scenario(baseUrl: string, token: string, ids: Ids, check: Middleware) {
  const client = createClient<paths>({ baseUrl, headers: { authorization: \`Bearer \${token}\` } });
  client.use(check);
  const slug = ids.slug;

  const created = await client.POST('/api/w/{slug}/tickets', {
    params: { path: { slug } },
    body: { projectId: ids.projectA, title: 'Generated client ticket', description: 'Made by openapi-fetch' },
  });
  if (!created.data) throw new Error('create: ' + created.response.status + ' ' + JSON.stringify(created.error));
  const ticket: { id: string; humanId: string } = created.data;

  const listed = await client.GET('/api/w/{slug}/tickets', { params: { path: { slug }, query: { projectId: ids.projectA, limit: 10 } } });
  if (!listed.data) throw new Error('list: ' + listed.response.status);
  const listedIds: string[] = listed.data.items.map((t) => t.id);

  const updated = await client.PATCH('/api/w/{slug}/tickets/{ref}', {
    params: { path: { slug, ref: ticket.humanId } },
    body: { title: 'Renamed by the generated client', stateId: ids.doneState },
  });
  if (!updated.data) throw new Error('update: ' + updated.response.status + ' ' + JSON.stringify(updated.error));
  const title: string = updated.data.title;
  const stateKey: string = updated.data.state.key;

  const moved = await client.POST('/api/w/{slug}/tickets/{ref}/move', {
    params: { path: { slug, ref: ticket.id } },
    body: { projectId: ids.projectB },
  });
  if (!moved.data) throw new Error('move: ' + moved.response.status + ' ' + JSON.stringify(moved.error));
  const movedHumanId: string = moved.data.humanId;

  const logged = await client.POST('/api/w/{slug}/time', {
    params: { path: { slug } },
    body: { ticketId: ticket.id, spentOn: '2024-05-14', minutes: 45, note: 'Logged through the generated client' },
  });
  if (!logged.data) throw new Error('log time: ' + logged.response.status + ' ' + JSON.stringify(logged.error));

  const refused = await client.POST('/api/w/{slug}/time', {
    params: { path: { slug } },
    body: { ticketId: ticket.id, spentOn: '2024-05-14', minutes: 0 },
  });
  const refusedCode: string | undefined = refused.error?.error.code;

  return { ticket, listedIds, title, stateKey, movedHumanId, entryId: logged.data.id, refusedStatus: refused.response.status, refusedCode };
}

/** Never run: the generated types must refuse these calls. */
export async function typeErrors(client: ReturnType<typeof createClient<paths>>) {
  // @ts-expect-error a ticket needs a title
  await client.POST('/api/w/{slug}/tickets', { params: { path: { slug: 'x' } }, body: { projectId: null } });
  // @ts-expect-error minutes is a number
  await client.POST('/api/w/{slug}/time', { params: { path: { slug: 'x' } }, body: { ticketId: 'x', spentOn: '2024-05-14', minutes: '45' } });
  // @ts-expect-error no such path
  await client.GET('/api/w/{slug}/no-such-thing', { params: { path: { slug: 'x' } } });
  // @ts-expect-error the path parameter slug is required
  await client.GET('/api/w/{slug}/tickets', {});
}
`;

let app: TestApp;
let ws: Workspace;
let wf: WorkflowIds;
let dir = '';
let token = '';
let projectA: { id: string; key: string }, projectB: { id: string; key: string };

beforeAll(async () => {
  app = await startTestApp();
  const sql = app.db.sql;
  ws = await makeWorkspace(sql);
  wf = await workflowIds(sql, ws);
  const owner = await makeUser(sql, ws, { role: 'owner' });
  projectA = await makeProject(sql, ws, { members: [{ person: owner }] });
  projectB = await makeProject(sql, ws, { members: [{ person: owner }] });
  await makePeriod(sql, ws, { start: '2024-05-01', end: '2024-05-31' });
  token = (await makeToken(sql, ws, owner, { scopes: ['read', 'write', 'triage'] })).token;
  // Inside the repository, so that `openapi-fetch` resolves from its node_modules (.tmp-*/ is ignored by git).
  dir = await mkdtemp(path.join(root, '.tmp-openapi-client-'));
});
afterAll(async () => {
  await app?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

it('types generated from the live document type-check a client, and that client lists, creates, updates and moves a ticket and logs time', async () => {
  const res = await fetch(`${app.base}/api/openapi.json`);
  expect(res.status).toBe(200);
  const types = astToString(await openapiTS((await res.json()) as Parameters<typeof openapiTS>[0]));
  expect(types.includes('"/api/w/{slug}/tickets/{ref}/move": {'), 'the move path is in the generated paths').toBe(true);
  await writeFile(path.join(dir, 'package.json'), JSON.stringify({ type: 'module' }));
  await writeFile(path.join(dir, 'api.ts'), types);
  await writeFile(path.join(dir, 'scenario.ts'), SCENARIO);

  // The generated types and the client code compile under the project's strict settings.
  const program = ts.createProgram([path.join(dir, 'scenario.ts')], {
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    strict: true,
    noUncheckedIndexedAccess: true,
    allowImportingTsExtensions: true,
    noEmit: true,
    skipLibCheck: true,
    types: [],
  });
  const diagnostics = ts.getPreEmitDiagnostics(program).map((d) => {
    const where = d.file ? `${path.basename(d.file.fileName)}:${d.file.getLineAndCharacterOfPosition(d.start ?? 0).line + 1}` : '';
    return `${where} ${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`;
  });
  expect(diagnostics).toEqual([]);

  // The same code, run against the server; every response is also checked against the document.
  const checked: string[] = [];
  const check = {
    async onResponse({ request, response }: { request: Request; response: Response }) {
      const text = await response.clone().text();
      const type = response.headers.get('content-type') ?? '';
      checkResponse(request.method, request.url, response.status, type, type.includes('json') && text ? JSON.parse(text) : text);
      checked.push(`${request.method} ${response.status}`);
    },
  };
  const { scenario } = (await import(pathToFileURL(path.join(dir, 'scenario.ts')).href)) as {
    scenario: (
      baseUrl: string,
      token: string,
      ids: { slug: string; projectA: string; projectB: string; doneState: string },
      check: object,
    ) => Promise<{
      ticket: { id: string; humanId: string };
      listedIds: string[];
      title: string;
      stateKey: string;
      movedHumanId: string;
      entryId: string;
      refusedStatus: number;
      refusedCode?: string;
    }>;
  };
  const out = await scenario(app.base, token, { slug: ws.slug, projectA: projectA.id, projectB: projectB.id, doneState: wf.states.done! }, check);

  expect(out.ticket.humanId).toMatch(new RegExp(`^${projectA.key}-\\d+$`));
  expect(out.listedIds).toContain(out.ticket.id);
  expect(out.title).toBe('Renamed by the generated client');
  expect(out.stateKey).toBe('done');
  expect(out.movedHumanId).toMatch(new RegExp(`^${projectB.key}-\\d+$`));
  expect(out.refusedStatus).toBe(400);
  expect(out.refusedCode).toBe('invalid');
  expect(checked).toEqual(['POST 201', 'GET 200', 'PATCH 200', 'POST 200', 'POST 201', 'POST 400']);

  // What the client did is in the database.
  const [row] = await app.db.sql<{ title: string; project_id: string; state: string }[]>`
    select t.title, t.project_id, s.key as state from tickets t join workflow_states s on s.id = t.state_id where t.id = ${out.ticket.id}`;
  expect(row).toEqual({ title: 'Renamed by the generated client', project_id: projectB.id, state: 'done' });
  const [entry] = await app.db.sql<{ ticket_id: string; minutes: number; project_id: string }[]>`
    select ticket_id, minutes, project_id from time_entries where id = ${out.entryId}`;
  expect(entry).toEqual({ ticket_id: out.ticket.id, minutes: 45, project_id: projectB.id });
}, 60_000);

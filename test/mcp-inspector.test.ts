import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requirementsOf } from '../src/core/access/authorize.ts';
import { allTools } from '../src/mcp/registry.ts';
import { startTestApp, type TestApp } from './helpers/app.ts';
import {
  makeBillingRun,
  makeClient,
  makeDocument,
  makeDocumentGrant,
  makePeriod,
  makeProject,
  makeTicket,
  makeToken,
  makeUser,
  makeWorkspace,
} from './helpers/factories.ts';
import { cleanEnv } from './helpers/spawn.ts';

/**
 * The MCP Inspector CLI (pinned as a devDependency): a client nobody here wrote, speaking
 * Streamable HTTP to the real Koa stack.
 */

const run = promisify(execFile);

let app: TestApp;
let token: string;
let ticket: { humanId: string };
let home: string;
let document: { id: string; number: string };

beforeAll(async () => {
  app = await startTestApp();
  const ws = await makeWorkspace(app.db.sql);
  const member = await makeUser(app.db.sql, ws);
  const project = await makeProject(app.db.sql, ws, { members: [{ person: member }] });
  ticket = await makeTicket(app.db.sql, ws, { projectId: project.id, title: 'Seen by the Inspector' });
  token = (await makeToken(app.db.sql, ws, member)).token;
  // a timesheet the member may download (a grant for its client): a resource the Inspector lists
  const client = await makeClient(app.db.sql, ws, { name: 'Inspected' });
  const period = await makePeriod(app.db.sql, ws, { start: '2025-01-01', end: '2025-01-31', closed: true });
  const run = await makeBillingRun(app.db.sql, ws, { periodId: period.id });
  document = await makeDocument(app.db.sql, ws, { runId: run.id, clientId: client.id, number: 'INSP-2025-0001' });
  await makeDocumentGrant(app.db.sql, ws, client.id, member);
  home = await mkdtemp(path.join(os.tmpdir(), 'wt-inspector-'));
});
afterAll(async () => {
  await app.close();
  await rm(home, { recursive: true, force: true });
});

async function inspector(...args: string[]): Promise<any> {
  const { stdout } = await runInspector(...args);
  return JSON.parse(stdout);
}

function runInspector(...args: string[]) {
  return run(
    'npx',
    ['--no-install', 'mcp-inspector', '--cli', `${app.base}/mcp`, '--transport', 'http', '--header', `Authorization: Bearer ${token}`, ...args],
    // its catalog file goes to a throw-away home
    { env: cleanEnv({ HOME: home, MCP_CATALOG_PATH: path.join(home, 'mcp.json') }) as NodeJS.ProcessEnv, timeout: 60_000, maxBuffer: 10 * 1024 * 1024 },
  );
}

describe('MCP Inspector CLI', () => {
  it('tools/list shows every tool with its schemas', async () => {
    const out = await inspector('--method', 'tools/list');
    // a member's token: every tool but the administration's (list_rates needs an Owner/Admin with the admin scope)
    expect(out.tools.map((t: any) => t.name).sort()).toEqual(
      allTools
        .filter((t) => !requirementsOf(t.action).admin)
        .map((t) => t.name)
        .sort(),
    );
    expect(out.tools.find((t: any) => t.name === 'search_tickets').outputSchema.type).toBe('object');
  }, 90_000);

  it('tools/call search_tickets returns structuredContent', async () => {
    const out = await inspector('--method', 'tools/call', '--tool-name', 'search_tickets', '--tool-arg', `query=${ticket.humanId}`);
    expect(out.isError).toBeFalsy();
    expect(out.structuredContent.items.map((t: any) => t.title)).toEqual(['Seen by the Inspector']);
  }, 90_000);

  it('resources/list shows the downloadable document; resources/read reads it and a ticket through the template', async () => {
    const listed = await inspector('--method', 'resources/list');
    expect(listed.resources).toEqual([
      expect.objectContaining({ uri: `worktracker://documents/${document.id}`, name: 'INSP-2025-0001.html', mimeType: expect.stringMatching(/^text\/html/) }),
    ]);
    const read = await inspector('--method', 'resources/read', '--uri', `worktracker://documents/${document.id}`);
    expect(read.contents).toEqual([expect.objectContaining({ uri: `worktracker://documents/${document.id}`, text: '<p>INSP-2025-0001</p>' })]);
    const templates = await inspector('--method', 'resources/templates/list');
    expect(templates.resourceTemplates.map((t: any) => t.uriTemplate)).toContain('worktracker://tickets/{humanId}');
    const page = await inspector('--method', 'resources/read', '--uri', `worktracker://tickets/${ticket.humanId}`);
    expect(JSON.parse(page.contents[0].text)).toMatchObject({ humanId: ticket.humanId, title: 'Seen by the Inspector' });
  }, 90_000);

  it('a domain error reaches it as an isError result with the REST code and reason', async () => {
    // the CLI prints the result and exits non-zero for an isError result
    const failed = await runInspector('--method', 'tools/call', '--tool-name', 'get_ticket', '--tool-arg', 'ticket=NOPE-1').then(
      () => null,
      (e: { code: number; stdout: string; stderr: string }) => e,
    );
    expect(failed?.stderr).toContain('tool_is_error');
    const out = JSON.parse(failed!.stdout);
    expect(out.isError).toBe(true);
    expect(out.structuredContent).toEqual({ code: 'not_found', reason: null, message: 'No such ticket.', details: {} });
  }, 90_000);
});

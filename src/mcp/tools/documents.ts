import { z } from 'zod';
import { getBankBalances } from '../../core/banks/balances.ts';
import { listDocuments } from '../../core/documents/list.ts';
import { resolveClientId } from '../../core/resolve/projects.ts';
import type { Ctx } from '../../core/ctx.ts';
import { defined } from '../args.ts';
import { defineTool } from '../tool.ts';

const clientArg = z.string().describe('Client: id, code or name.');

const clientFilter = (ctx: Ctx, value: string | undefined) => (value === undefined ? undefined : resolveClientId(ctx, value, 'client'));

const document = z.object({
  id: z.string(),
  number: z.string(),
  runId: z.string(),
  scope: z.enum(['combined', 'project']),
  client: z.string(),
  project: z.string().nullable(),
  periodStart: z.string(),
  format: z.enum(['html', 'pdf', 'csv']),
  version: z.number(),
  bytes: z.number(),
  voided: z.boolean(),
  redacted: z.boolean().describe('Superseded by a newer version'),
  createdAt: z.string(),
  deliveries: z.array(z.object({ email: z.string().nullable(), state: z.string() })),
});

export const listDocumentsTool = defineTool({
  name: 'list_documents',
  title: 'List documents',
  description:
    'Client timesheet documents you may download, newest first. scope is the widest rule you hold: all, client, projects, or none (then the list is empty).',
  toolset: 'documents',
  action: 'documents.list',
  idempotent: true,
  input: () => z.object({ client: clientArg.optional(), runId: z.string().optional().describe('Billing run id.') }),
  output: z.object({ scope: z.enum(['all', 'client', 'projects', 'none']), documents: z.array(document) }),
  fields: { clientId: 'client' },
  run: async (ctx, a) => {
    const list = await listDocuments(ctx, defined({ clientId: await clientFilter(ctx, a.client), runId: a.runId }));
    return {
      scope: list.scope,
      documents: list.documents.map((d) => ({
        id: d.id,
        number: d.number,
        runId: d.runId,
        scope: d.scope,
        client: d.clientName,
        project: d.projectName,
        periodStart: d.periodStart,
        format: d.format,
        version: d.version,
        bytes: d.bytes,
        voided: d.voided,
        redacted: d.redacted,
        createdAt: d.createdAt,
        deliveries: d.deliveries.map(({ email, state }) => ({ email, state })),
      })),
    };
  },
});

export const getBankBalancesTool = defineTool({
  name: 'get_bank_balances',
  title: 'Get bank balances',
  description:
    "Prepaid time banks: deposited, consumed (billed) and remaining minutes. Owner/admin: all; project managers: their projects' clients; billing contacts: their client.",
  toolset: 'documents',
  action: 'banks.balances',
  idempotent: true,
  input: () => z.object({ client: clientArg.optional() }),
  output: z.object({
    banks: z.array(
      z.object({
        id: z.string(),
        name: z.string(),
        clientId: z.string(),
        clientName: z.string(),
        depositedMinutes: z.number(),
        consumedMinutes: z.number(),
        remainingMinutes: z.number(),
      }),
    ),
  }),
  fields: { clientId: 'client' },
  run: async (ctx, a) => getBankBalances(ctx, defined({ clientId: await clientFilter(ctx, a.client) })),
});

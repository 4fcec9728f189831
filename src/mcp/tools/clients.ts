import { z } from 'zod';
import { listClients } from '../../core/clients/list.ts';
import { lines } from '../shapes.ts';
import { defineTool } from '../tool.ts';

/** The agency's clients, for workspace users (client users never see the tool: the action is staff-only). */
export const listClientsTool = defineTool({
  name: 'list_clients',
  title: 'List clients',
  description:
    'The agency’s clients by name, with the code that starts their document numbers and their timesheet locale. Pass a code or name where a tool takes a client (billing client, document filters). Archived clients only when asked.',
  toolset: 'workflow',
  op: listClients,
  idempotent: true,
  input: () => z.object({ includeArchived: z.boolean().default(false).describe('Also list archived clients (default false).') }),
  output: z.object({
    clients: z.array(
      z.object({
        id: z.string(),
        code: z.string(),
        name: z.string(),
        locale: z.string(),
        archived: z.boolean(),
      }),
    ),
  }),
  args: (_ctx, a) => ({ archived: a.includeArchived ? ('all' as const) : ('false' as const) }),
  result: ({ clients }) => ({
    clients: clients.map((c) => ({ id: c.id, code: c.code, name: c.name, locale: c.locale, archived: c.archivedAt !== null })),
  }),
  text: (o) => lines(o.clients, (c) => `${c.code} ${c.name} (${c.locale})${c.archived ? ' [archived]' : ''}`, 'No clients.'),
});

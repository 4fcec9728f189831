import { z } from 'zod';
import { contextPackInput, DUE_SOON_DAYS, getContextPack, STALE_DAYS } from '../../core/context/pack.ts';
import { resolveProjectRef } from '../../core/resolve/project-names.ts';
import { defined, projectArg } from '../args.ts';
import { compact, compactTicket, ticketLine } from '../shapes.ts';
import { defineTool } from '../tool.ts';

const LISTS = ['assigned', 'overdue', 'dueSoon', 'blocked', 'stale'] as const;

const packList = z.object({ items: z.array(compactTicket), omitted: z.number().describe('More tickets beyond items') });

export const getContextPackTool = defineTool({
  name: 'get_context_pack',
  title: 'Get context pack',
  description: `What needs attention, in one call: assigned to you; open tickets overdue, due within ${DUE_SOON_DAYS} days, blocked by an open ticket, or stale (no change in ${STALE_DAYS} days); tickets with your unbilled time. omitted counts what each list left out.`,
  toolset: 'context',
  op: getContextPack,
  idempotent: true,
  input: (s) =>
    z.object({
      scope: z.enum(['mine', 'visible']).default('mine').describe('mine: tickets assigned to, reported or watched by you; visible: all you can see.'),
      project: projectArg(s, 'Only this project').optional(),
      limit: contextPackInput.shape.limit.describe('Tickets per list'),
    }),
  output: z.object({
    today: z.string(),
    scope: z.enum(['mine', 'visible']),
    ...(Object.fromEntries(LISTS.map((k) => [k, packList])) as Record<(typeof LISTS)[number], typeof packList>),
    unbilled: z.object({ items: z.array(compactTicket.extend({ unbilledMinutes: z.number() })), omitted: z.number() }),
  }),
  fields: { projectId: 'project' },
  args: async (ctx, a) => {
    const projectId = a.project === undefined ? undefined : await resolveProjectRef(ctx, a.project, 'project');
    return defined({ scope: a.scope, projectId, limit: a.limit });
  },
  result: (pack) => {
    const lists = Object.fromEntries(LISTS.map((k) => [k, { items: pack[k].items.map(compact), omitted: pack[k].omitted }]));
    return {
      today: pack.today,
      scope: pack.scope,
      ...(lists as Record<(typeof LISTS)[number], z.input<typeof packList>>),
      unbilled: { items: pack.unbilled.items.map((t) => ({ ...compact(t), unbilledMinutes: t.unbilledMinutes })), omitted: pack.unbilled.omitted },
    };
  },
  text: (p) =>
    [
      `Today ${p.today} (scope: ${p.scope})`,
      ...LISTS.map((k) => [`## ${k}`, ...p[k].items.map(ticketLine), ...(p[k].omitted ? [`(+${p[k].omitted} more)`] : [])].join('\n')),
      [
        '## unbilled',
        ...p.unbilled.items.map((t) => `${ticketLine(t)} — ${t.unbilledMinutes} min`),
        ...(p.unbilled.omitted ? [`(+${p.unbilled.omitted} more)`] : []),
      ].join('\n'),
    ].join('\n'),
});

import { z } from 'zod';
import { getWorkflow } from '../../core/workflow/get.ts';
import { defineTool } from '../tool.ts';

const named = { id: z.uuid(), key: z.string(), name: z.string() };

export const getWorkflowTool = defineTool({
  name: 'get_workflow',
  title: 'Get workflow',
  description:
    'The workspace vocabulary: states (board order, open/closed, default, customer-resolve), kinds, priorities (position 0 most urgent) and labels. Tools accept them by id, key or name.',
  toolset: 'workflow',
  op: getWorkflow,
  idempotent: true,
  input: () => z.object({}),
  output: z.object({
    states: z.array(
      z.object({ ...named, category: z.enum(['open', 'closed']), position: z.number().int(), isDefault: z.boolean(), isCustomerResolve: z.boolean() }),
    ),
    kinds: z.array(z.object({ ...named, position: z.number().int(), isInbound: z.boolean() })),
    priorities: z.array(z.object({ ...named, position: z.number().int(), isDefault: z.boolean() })),
    labels: z.array(z.object({ id: z.uuid(), name: z.string(), color: z.string().nullable() })),
  }),
  args: () => ({}),
  text: (w) =>
    [
      `States: ${w.states.map((s) => `${s.name} (${s.category}${s.isDefault ? ', default' : ''})`).join(', ')}`,
      `Kinds: ${w.kinds.map((k) => k.name).join(', ')}`,
      `Priorities (most urgent first): ${w.priorities.map((p) => p.name).join(', ')}`,
      `Labels: ${w.labels.map((l) => l.name).join(', ') || 'none'}`,
    ].join('\n'),
});

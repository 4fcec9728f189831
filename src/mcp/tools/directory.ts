import { z } from 'zod';
import { listPeople, listPeopleInput, PEOPLE_LIMIT_MAX } from '../../core/people/list.ts';
import { listProjects } from '../../core/projects/list.ts';
import { defined, limitArg } from '../args.ts';
import { lines } from '../shapes.ts';
import { defineTool } from '../tool.ts';

/** Who and where: the names the other tools take, so an assistant never guesses one. */

export const listProjectsTool = defineTool({
  name: 'list_projects',
  title: 'List projects',
  description:
    'Projects you can name in other tools (by key or name), with the billing client and your membership (full or limited, manager; null: not a member).',
  toolset: 'workflow',
  op: listProjects,
  idempotent: true,
  input: () => z.object({}),
  output: z.object({
    projects: z.array(
      z.object({
        id: z.string(),
        key: z.string(),
        name: z.string(),
        billingClient: z.string().nullable().describe('Client name; null: internal'),
        membership: z.enum(['full', 'limited', 'full manager', 'limited manager']).nullable(),
      }),
    ),
  }),
  args: () => ({}),
  result: ({ projects }) => ({
    projects: projects.map((p) => ({
      id: p.id,
      key: p.key,
      name: p.name,
      billingClient: p.billingClient?.name ?? null,
      membership: p.membership ? (`${p.membership.access}${p.membership.isManager ? ' manager' : ''}` as const) : null,
    })),
  }),
  text: (o) =>
    lines(
      o.projects,
      (p) => `${p.key} ${p.name}${p.billingClient ? ` (client ${p.billingClient})` : ''}${p.membership ? ` [you: ${p.membership}]` : ''}`,
      'No projects.',
    ),
});

export const listPeopleTool = defineTool({
  name: 'list_people',
  title: 'List people',
  description:
    'People you may name as assignee, viewer or mention: colleagues, and client people of clients on your projects. Filter by text in name or email. Pass the email or name to other tools.',
  toolset: 'workflow',
  op: listPeople,
  idempotent: true,
  input: () =>
    z.object({
      query: listPeopleInput.shape.q.describe('Text in the name or email.'),
      limit: limitArg('How many', 50, PEOPLE_LIMIT_MAX),
    }),
  output: z.object({
    people: z.array(
      z.object({
        id: z.string(),
        name: z.string(),
        email: z.string().nullable(),
        role: z.string().describe('owner, admin, member, agent, client_elevated or client'),
        client: z.string().nullable().describe('Client name, for client people'),
      }),
    ),
    omitted: z.number().describe('More matches beyond limit'),
  }),
  fields: { q: 'query' },
  args: (_ctx, a) => defined({ q: a.query, limit: a.limit }),
  result: ({ people, omitted }) => ({
    people: people.map((p) => ({ id: p.id, name: p.name, email: p.email, role: p.role, client: p.client?.name ?? null })),
    omitted,
  }),
  text: (o) =>
    [
      lines(o.people, (p) => `${p.name}${p.email ? ` <${p.email}>` : ''} ${p.role}${p.client ? ` (${p.client})` : ''}`, 'Nobody matches.'),
      ...(o.omitted ? [`(+${o.omitted} more; narrow with query)`] : []),
    ].join('\n'),
});

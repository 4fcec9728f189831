import { ErrorCode, type CompleteResult, type GetPromptResult, type Prompt } from '@modelcontextprotocol/sdk/types.js';
import { can } from '../core/access/authorize.ts';
import { listClients } from '../core/clients/list.ts';
import type { Ctx } from '../core/ctx.ts';
import { toAppError } from '../core/failures.ts';
import { runOp } from '../core/operation.ts';
import { listPeople } from '../core/people/list.ts';
import { listProjects } from '../core/projects/list.ts';
import { getWorkflow } from '../core/workflow/get.ts';
import type { McpOptions } from './options.ts';
import type { Surface } from './tool.ts';
import { ProtocolError } from './wire.ts';
import { addDays, monthEnd } from '../core/time/dates.ts';

/**
 * Prompts (issue 26): the work assistants are asked most, as templates a client offers its user
 * (a slash command), each a user message that names the tools to use and the order to use them in.
 * Which prompts a connection has follows what its token can do (like its tools): logging time
 * needs the right to log it, triage the Inbox, a client's month the staff's time reads; a
 * read-only connection has no prompt that leads to writes. Completions (completion/complete)
 * suggest values for their arguments from the core's own reads as the caller (projects they may
 * name, people they may see, the workspace's states, clients, months), so a suggestion never
 * shows what the caller could not read through a tool.
 */

type ArgumentKind = 'project' | 'person' | 'state' | 'client' | 'month' | 'text';

interface PromptArgument {
  name: string;
  description: string;
  required?: boolean;
  /** What completion/complete suggests for it ('text': nothing). */
  kind: ArgumentKind;
}

interface PromptDef {
  name: string;
  title: string;
  description: string;
  arguments: PromptArgument[];
  /** Whether a connection has it. */
  offered: (surface: Surface, opts: McpOptions) => boolean;
  /** The user message, from the arguments (required ones present) and the current time. */
  message: (args: Record<string, string>, now: Date) => string;
}

const MAX_ARGUMENT = 4000;
const MAX_VALUES = 100;

const today = (now: Date) => now.toISOString().slice(0, 10);
/** Monday and Sunday of the UTC week holding `now` (core/time/dates.ts does the calendar). */
function weekOf(now: Date): [string, string] {
  const monday = addDays(today(now), -((now.getUTCDay() + 6) % 7));
  return [monday, addDays(monday, 6)];
}
/** `YYYY-MM` of the month `back` months before now's (UTC). */
const monthBefore = (now: Date, back: number) => new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - back, 1)).toISOString().slice(0, 7);
const MONTH = /^\d{4}-(0[1-9]|1[0-2])$/;
const monthRange = (month: string): [string, string] => [`${month}-01`, monthEnd(`${month}-01`)];

const staffCan = (s: Surface, action: Parameters<typeof can>[1]) => can(s.principal, action) === null;

export const prompts: PromptDef[] = [
  {
    name: 'log_week_time',
    title: 'Log this week’s time',
    description: 'Turn a description of your week into time entries on the right tickets, without logging anything twice.',
    arguments: [
      { name: 'description', description: 'What you worked on this week, in your own words (days, hours, tickets or topics).', required: true, kind: 'text' },
      { name: 'project', description: 'The project most of it belongs to (key), to narrow the ticket search.', kind: 'project' },
    ],
    offered: (s, o) => !o.readonly && staffCan(s, 'time.log'),
    message: (a, now) => {
      const [from, to] = weekOf(now);
      return [
        `Log my time for this week (Monday ${from} to Sunday ${to}) from this description:`,
        '',
        a.description!,
        '',
        `1. Call get_time_entries with from ${from} and to ${to} to see what is already logged; never log the same work twice.`,
        `2. Find each ticket with search_tickets${a.project ? ` in project ${a.project}` : ''} (by words of the description) or get_ticket when I name one (like WEB-12).`,
        '3. Show me the entries you intend to log (ticket, date, minutes, note) and wait for my yes; ask when a ticket or a duration is unclear.',
        '4. Then call log_time once per entry, with spentOn, whole minutes and a short note, and sum up what was logged against the week.',
      ].join('\n');
    },
  },
  {
    name: 'triage_inbox',
    title: 'Triage the Inbox',
    description: 'Go through the Inbox: propose a project, kind, priority and assignee for each ticket, then move the ones you agree on.',
    arguments: [
      { name: 'project', description: 'A project to prefer for tickets that fit it (key).', kind: 'project' },
      { name: 'state', description: 'The state to put accepted tickets in (default: the workflow’s default state).', kind: 'state' },
      { name: 'assignee', description: 'Someone to prefer as assignee (email or name).', kind: 'person' },
    ],
    offered: (s, o) => !o.readonly && s.inbox && staffCan(s, 'tickets.move'),
    message: (a) =>
      [
        'Triage the Inbox with me.',
        '',
        '1. Call get_workflow for the kinds, priorities and states, list_projects for where tickets can go, and search_tickets with queue inbox for the tickets waiting.',
        `2. For each ticket, read it (get_ticket) and propose a project${a.project ? ` (prefer ${a.project} when it fits)` : ''}, a kind, a priority and an assignee (list_people${a.assignee ? `; prefer ${a.assignee}` : ''}), with one line of why; flag duplicates of open tickets.`,
        '3. Show the proposals as a table and wait for my decisions.',
        `4. Move the accepted ones with move_ticket${a.state ? ` into state ${a.state}` : ''} and set the fields with update_ticket; leave the rest in the Inbox and say what is left.`,
      ].join('\n'),
  },
  {
    name: 'summarise_client_month',
    title: 'Summarise a client’s month',
    description: 'A summary of one client’s month: time by project and billing policy, the work done, the timesheets and what is still open.',
    arguments: [
      { name: 'client', description: 'The client (code or name).', required: true, kind: 'client' },
      { name: 'month', description: 'The month, YYYY-MM (default: the previous month).', kind: 'month' },
    ],
    offered: (s) => staffCan(s, 'time.list') && staffCan(s, 'clients.list'),
    message: (a, now) => {
      const month = a.month ?? monthBefore(now, 1);
      const [from, to] = monthRange(month);
      return [
        `Summarise the month ${month} (${from} to ${to}) for client ${a.client}.`,
        '',
        `1. Call list_clients and list_projects to find the client's projects; search_tickets per project for the tickets worked on or closed in the month.`,
        `2. Call get_time_entries from ${from} to ${to} (for each person who worked on them, via list_people) and total the minutes by project, ticket and billing policy (paid, free, prepaid bank).`,
        '3. Call list_documents for the client’s timesheets of the month and get_bank_balances for its prepaid banks.',
        '4. Write a short summary for an account manager: hours by project, the main work done, anything not billable and why, bank balance, and open tickets that carry into next month.',
      ].join('\n');
    },
  },
];

const byName = new Map(prompts.map((p) => [p.name, p]));

/** prompts/list: the prompts of this connection. */
export function listPrompts(surface: Surface, opts: McpOptions): Prompt[] {
  return prompts
    .filter((p) => p.offered(surface, opts))
    .map((p) => ({
      name: p.name,
      title: p.title,
      description: p.description,
      arguments: p.arguments.map((a) => ({ name: a.name, description: a.description, required: Boolean(a.required) })),
    }));
}

function promptOf(surface: Surface, opts: McpOptions, name: string): PromptDef {
  const p = byName.get(name);
  // a prompt this connection does not have is as unknown as one that does not exist (-32602, as the specification says)
  if (!p || !p.offered(surface, opts))
    throw new ProtocolError(ErrorCode.InvalidParams, `Unknown prompt: ${name.slice(0, 100)}. prompts/list names the prompts of this connection.`);
  return p;
}

/** prompts/get: the prompt's message with its arguments filled in; a missing required or malformed argument is -32602. */
export function getPrompt(surface: Surface, opts: McpOptions, name: string, args: Record<string, string> | undefined, now: Date): GetPromptResult {
  const p = promptOf(surface, opts, name);
  const given: Record<string, string> = {};
  for (const a of p.arguments) {
    const v = args?.[a.name]?.trim();
    if (!v) {
      if (a.required) throw new ProtocolError(ErrorCode.InvalidParams, `Prompt ${p.name} needs the argument ${a.name}.`);
      continue;
    }
    if (v.length > MAX_ARGUMENT) throw new ProtocolError(ErrorCode.InvalidParams, `Argument ${a.name} is longer than ${MAX_ARGUMENT} characters.`);
    if (a.kind === 'month' && !MONTH.test(v)) throw new ProtocolError(ErrorCode.InvalidParams, `Argument ${a.name} is a month as YYYY-MM.`);
    given[a.name] = v;
  }
  return { description: p.description, messages: [{ role: 'user', content: { type: 'text', text: p.message(given, now) } }] };
}

/**
 * completion/complete for a prompt's argument: up to 100 values starting with (or, for people,
 * containing) what was typed, read through the core's operations as the caller. A read the caller
 * may not make suggests nothing rather than failing the request.
 */
export async function completePrompt(ctx: Ctx, surface: Surface, opts: McpOptions, name: string, argument: string, typed: string): Promise<CompleteResult> {
  const arg = promptOf(surface, opts, name).arguments.find((a) => a.name === argument);
  if (!arg) throw new ProtocolError(ErrorCode.InvalidParams, `Prompt ${name} has no argument ${argument.slice(0, 100)}.`);
  let values: string[];
  try {
    values = await candidates(ctx, arg.kind, typed.trim().slice(0, 200));
  } catch (err) {
    if (!toAppError(err)) throw err;
    values = [];
  }
  return { completion: { values: values.slice(0, MAX_VALUES), total: values.length, hasMore: values.length > MAX_VALUES } };
}

const startsWith = (typed: string) => (v: string) => v.toLowerCase().startsWith(typed.toLowerCase());

async function candidates(ctx: Ctx, kind: ArgumentKind, typed: string): Promise<string[]> {
  switch (kind) {
    case 'project': {
      const { projects } = await runOp(listProjects, ctx, {});
      return projects.map((p) => p.key).filter(startsWith(typed));
    }
    case 'person': {
      // the core filters by name or email in SQL, among the people the caller may see
      const { people } = await runOp(listPeople, ctx, { q: typed || undefined, limit: MAX_VALUES + 1 });
      return people.map((p) => p.email ?? p.name);
    }
    case 'state': {
      const { states } = await runOp(getWorkflow, ctx, {});
      return states.map((s) => s.name).filter(startsWith(typed));
    }
    case 'client': {
      const { clients } = await runOp(listClients, ctx, { archived: 'false' });
      return clients.map((c) => c.code).filter(startsWith(typed));
    }
    case 'month':
      return Array.from({ length: 13 }, (_, i) => monthBefore(ctx.now(), i)).filter((m) => m.startsWith(typed));
    case 'text':
      return [];
  }
}

import { realpathSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { loadConfig, ConfigError } from '../config.ts';
import { toAppError } from '../core/failures.ts';
import { migrate } from '../db/migrate.ts';
import { openDatabase } from '../db/open.ts';
import { makeLogger } from '../log.ts';
import { COMMANDS, runCommand, UsageError } from './commands.ts';

const usage = `wt — work tracker command line

  wt migrate                                   apply database migrations
  wt mcp [--toolsets a,b] [--readonly]         MCP server on stdio (token from WT_TOKEN; or WT_MCP_TOOLSETS, WT_MCP_READONLY)
  wt demo [--json]                             ensure the demo workspace; print people and fresh tokens
  wt embedded-env                              print the embedded default's DATABASE_URL and WT_SECRET_KEY (to move to your own database)
  wt workspace create --slug S --name N [--owner EMAIL --owner-name NAME]
                                               create a workspace with the default workflow; --owner emails
                                               its first Owner an invitation (the worker sends the link)
  wt user create --workspace S --email E --name N --role R [--password P] [--client CODE] [--as EMAIL]
                                               add a person; for a member already there, a new role is a role change (as EMAIL)
  wt user role --workspace S --email E --role R [--client CODE] [--as EMAIL]
                                               change a member's role (audited; a client role drops the billing-operator flag)
  wt invite --workspace S --email E --name N --role R [--client CODE] [--as EMAIL]
                                               invite someone by email (the worker sends the link; audited)
  wt member set --workspace S --email E [--role R] [--client CODE|none] [--timezone TZ]
                [--weekly-target MINUTES|none] [--category NAME|none] [--as EMAIL]
                                               change a member's role, client or time settings (role changes audited)
  wt client create --workspace S --name N --code C [--locale L] [--layout combined|project]
                    [--policy paid|free|bank:ID] [--mode period|on_close] [--as EMAIL]
                                               create a client (audited)
  wt client list --workspace S [--archived]    the workspace's clients (--archived: archived ones too)
  wt project create --workspace S --key K --name N [--client CODE] [--collaborators CODE,CODE]
                    [--policy paid|free|bank:ID] [--mode period|on_close] [--as EMAIL]
                                               create a project billed to a client (audited)
  wt project list --workspace S [--as EMAIL]   the projects the caller may name
  wt project member set --workspace S --project KEY --email E --access full|limited [--manager]
                        [--category NAME] [--as EMAIL]
                                               add a workspace user to a project or change their membership
                                               (the whole membership: an option left out is its default; audited)
  wt project member remove --workspace S --project KEY --email E [--as EMAIL]
                                               end a project membership (their time and tickets stay; audited)
  wt client recipients set --workspace S --client CODE [--client-user EMAIL]... [--recipient EMAIL[,NAME]]...
                           [--opted-out EMAIL[,NAME]]... | --none [--as EMAIL]
                                               replace who receives the client's timesheets, sent in this order:
                                               its client users, the addresses, then opted-out ones (sent nothing; audited)
  wt category create --workspace S --name N [--as EMAIL]
                                               create a consultant category (audited)
  wt category list --workspace S               the workspace's consultant categories
  wt rates list --workspace S                  the workspace's hourly rates: category, scope, currency, per hour, from
  wt rates set --workspace S --rate category=NAME,currency=EUR,hourly=95.50,from=YYYY-MM-DD[,client=CODE|,project=KEY]...
               | --none [--as EMAIL]
                                               replace the whole rate table (Owner/Admin; audited)
  wt period open --workspace S [--start YYYY-MM-DD] [--as EMAIL]
                                               open the next period (a calendar month after the last one;
                                               --start only for the very first, default the current month)
  wt period close --workspace S --period YYYY-MM [--as EMAIL]
                                               close the period starting in that month (its time is frozen)
  wt period list --workspace S                 the workspace's periods, oldest first
  wt settings set --workspace S [--name N] [--timezone TZ] [--weekly-target MINUTES|none]
                  [--mail-from-name NAME|none] [--reply-to EMAIL|none] [--as EMAIL]
                                               change the workspace's settings (an option left out stays; audited)
  wt token create --workspace S --email E --name N [--scopes read,write,triage,admin]
                  [--projects KEY,KEY] [--agent AGENT_EMAIL] [--expires ISO_DATETIME]
  wt billing run --workspace S --period YYYY-MM [--dry-run] [--wait] [--approve] [--as EMAIL]
                                               bill a closed period (as EMAIL, an owner or admin; default the first owner);
                                               --wait follows the run to its end or its review, --approve approves it there
  wt billing approve --workspace S --run ID [--wait] [--as EMAIL]
                                               approve a run awaiting review: its timesheets are emailed (audited)
  wt billing void --workspace S --run ID --reason R [--as EMAIL]
                                               void a billing run (audited)
  wt delivery resend --workspace S --document ID --delivery ID [--as EMAIL]
                                               send a failed or unknown delivery again (audited)
  wt mailbox set --workspace S --host H --port P [--secure] --user U [--password-stdin] [--folder F]
                 [--after-import seen|move] [--move-to F] [--trusted-authserv-id ID] [--disabled] [--as EMAIL]
                                               connect the workspace's mailbox; the password comes from stdin
                                               or WT_MAILBOX_PASSWORD, never the command line (omit it to keep the stored one)
  wt mailbox poll --workspace S [--as EMAIL]   queue a poll of the workspace's mailbox now

DATABASE_URL selects the database; without it the embedded one under ./.data is used.`;

/** Where a command line's words go, and what it reads of its process. */
export interface WtIo {
  /** The environment (DATABASE_URL, LOG_LEVEL, WT_TOKEN, ...). */
  env: NodeJS.ProcessEnv;
  /** A line of output (stdout). */
  print: (line: string) => void;
  /** A refusal's one line, or a crash (stderr). */
  error: (what: unknown) => void;
}

async function run(argv: string[], io: WtIo): Promise<void> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      json: { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
      slug: { type: 'string' },
      name: { type: 'string' },
      workspace: { type: 'string' },
      email: { type: 'string' },
      role: { type: 'string' },
      password: { type: 'string' },
      client: { type: 'string' },
      scopes: { type: 'string' },
      projects: { type: 'string' },
      agent: { type: 'string' },
      expires: { type: 'string' },
      toolsets: { type: 'string' },
      readonly: { type: 'boolean' },
      period: { type: 'string' },
      'dry-run': { type: 'boolean' },
      wait: { type: 'boolean' },
      approve: { type: 'boolean' },
      as: { type: 'string' },
      host: { type: 'string' },
      port: { type: 'string' },
      secure: { type: 'boolean' },
      user: { type: 'string' },
      folder: { type: 'string' },
      'after-import': { type: 'string' },
      'move-to': { type: 'string' },
      'trusted-authserv-id': { type: 'string' },
      disabled: { type: 'boolean' },
      'password-stdin': { type: 'boolean' },
      run: { type: 'string' },
      reason: { type: 'string' },
      document: { type: 'string' },
      delivery: { type: 'string' },
      timezone: { type: 'string' },
      'weekly-target': { type: 'string' },
      category: { type: 'string' },
      code: { type: 'string' },
      locale: { type: 'string' },
      layout: { type: 'string' },
      policy: { type: 'string' },
      mode: { type: 'string' },
      key: { type: 'string' },
      collaborators: { type: 'string' },
      archived: { type: 'boolean' },
      owner: { type: 'string' },
      'owner-name': { type: 'string' },
      project: { type: 'string' },
      access: { type: 'string' },
      manager: { type: 'boolean' },
      recipient: { type: 'string', multiple: true },
      'client-user': { type: 'string', multiple: true },
      'opted-out': { type: 'string', multiple: true },
      rate: { type: 'string', multiple: true },
      none: { type: 'boolean' },
      start: { type: 'string' },
      'mail-from-name': { type: 'string' },
      'reply-to': { type: 'string' },
    },
  });
  const command = positionals.join(' ');
  if (values.help || !command) {
    io.print(usage);
    return;
  }
  const config = loadConfig(io.env);
  const found = COMMANDS[command];
  if (!found) throw new UsageError(`unknown command "${command}"`);
  if (command === 'embedded-env' && config.DATABASE_URL)
    throw new UsageError("embedded-env prints the embedded default's settings: run it without DATABASE_URL");
  const log = makeLogger(io.env.LOG_LEVEL ?? 'warn', command === 'mcp');
  const db = await openDatabase(config, log, { max: 2 });
  try {
    await migrate(db.sql, db.url);
    await runCommand(found, {
      db,
      config,
      values,
      env: io.env,
      // loaded only by `wt mcp`: the MCP server's modules were most of every other command's start
      // (`node bin/wt.js --help`: 2.0 -> 0.9 CPU-s)
      serveStdio: async (options) => (await import('../mcp/stdio.ts')).serveStdio(db.sql, io.env, options),
      print: io.print,
    });
  } finally {
    await db.close();
  }
}

/**
 * One command line; resolves to its exit code: 0 done, 2 refused (one `wt: ` line), 1 crashed.
 * The program below runs it with the process's arguments and streams; the tests run most
 * commands in their own process through it (a tsx start per command was most of their time).
 */
export async function wt(argv: string[], io: WtIo): Promise<number> {
  try {
    await run(argv, io);
    return 0;
  } catch (err) {
    // an operation's input refused by its schema is the same 400 as through REST (toAppError), not a crash
    const refused = err instanceof UsageError || err instanceof ConfigError ? err : toAppError(err);
    if (refused) {
      io.error(`wt: ${refusal(refused)}`);
      return 2;
    }
    io.error(err);
    return 1;
  }
}

/** `wt` as a program: the process's arguments, environment and streams, and its exit code. */
export async function program(): Promise<never> {
  process.exit(await wt(process.argv.slice(2), { env: process.env, print: (line) => console.log(line), error: (what) => console.error(what) }));
}

// Started as a program (`node dist/cli/main.js`, `tsx src/cli/main.ts`); bin/wt.js calls program() itself.
if (process.argv[1] && realpathSync(process.argv[1]) === fileURLToPath(import.meta.url)) void program();

/**
 * A refusal as one line. A name that matched nothing or several (src/core/resolve) lists what
 * would have matched, by what a person types (key, code, email, name or month), not by id.
 */
function refusal(err: Error): string {
  const details = (err as { details?: { field?: unknown; value?: unknown; choices?: unknown } }).details;
  // only the resolvers' rows (objects); a refusal listing plain words (the MCP options') words its own message
  if (!details || !Array.isArray(details.choices) || !details.choices.every((c) => typeof c === 'object' && c !== null)) return err.message;
  const names = (details.choices as Record<string, unknown>[]).map((c) =>
    String(c.key ?? c.code ?? c.email ?? c.periodStart?.toString().slice(0, 7) ?? c.name ?? c.id),
  );
  const what = `${String(details.field)} "${String(details.value)}" matches ${err.message.includes('more than one') ? 'more than one' : 'nothing'}`;
  return names.length > 0 ? `${what}; one of: ${names.join(', ')}` : what;
}

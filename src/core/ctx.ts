import type { Db } from '../db/connect.ts';
import type { Principal } from './auth/principal.ts';
import type { Caches } from './cache.ts';
import type { MailboxMachinery } from './mail/machinery.ts';
import type { CrontabItem } from './ops/crontab.ts';

/**
 * What every core operation receives: the database handle (or the open transaction),
 * who is calling, and the clock. Nothing from a transport.
 */
export interface Ctx {
  sql: Db;
  principal: Principal;
  now: () => Date;
  inTx?: boolean;
  /** Set inside an audited action (src/core/ops/audit.ts): an operation it calls that audits itself adds no second record. */
  auditing?: boolean;
  /** Process caches (workflow, ...); absent in one-off commands, where everything is read fresh. */
  caches?: Caches;
  /** The mailbox settings' machinery (sealing key, outbound guard), from the process's services; absent where no door writes a mailbox. */
  mailbox?: MailboxMachinery;
  /** The console's: the process's crontab, parsed at the edge (src/ops/crontab.ts), for the crontab view. */
  crontab?: readonly CrontabItem[];
  /** The console's: the local SMTP catcher's folder (null: mail goes to a real SMTP server), for the outbox page. */
  outboxDir?: string | null;
}

// one function for every caller: clockOf runs on every request (authentication, each core context)
const systemClock = (): Date => new Date();

/** The process clock: the injected one (tests), else the system's. */
export const clockOf = (services: { now?: () => Date }): (() => Date) => services.now ?? systemClock;

/**
 * The one way every adapter builds a core context: the process's services, the verified caller,
 * and (REST's idempotent requests) the transaction already open for this request.
 */
export function makeCtx(services: { sql: Db; caches?: Caches; now?: () => Date; mailbox?: MailboxMachinery }, principal: Principal, openTx?: Db): Ctx {
  return {
    sql: openTx ?? services.sql,
    ...(openTx ? { inTx: true } : {}),
    principal,
    now: clockOf(services),
    caches: services.caches,
    mailbox: services.mailbox,
  };
}

/** Runs `fn` in one transaction; nested calls reuse the open one. */
export async function tx<T>(ctx: Ctx, fn: (ctx: Ctx) => Promise<T>): Promise<T> {
  if (ctx.inTx) return fn(ctx);
  return ctx.sql.begin((t) => fn({ ...ctx, sql: t as unknown as Db, inTx: true })) as Promise<T>;
}

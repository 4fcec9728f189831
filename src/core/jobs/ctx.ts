import type { Db } from '../../db/connect.ts';
import type { Logger } from '../../log.ts';
import type { PdfRenderer } from '../documents/pdf-renderer.ts';
import type { Mailer } from '../mail/mailer.ts';
import type { OutboundGuard } from '../net/outbound.ts';

/**
 * What a core operation run by a job receives: no principal (the job acts for the operation that
 * enqueued it, which was authorized then), the database, the clock and the process's services.
 */
export interface JobCtx {
  sql: Db;
  now: () => Date;
  log: Logger;
  /** The pdf renderer; null when no Chromium is installed (no pdf documents are made). */
  pdf: PdfRenderer | null;
  mailer: Mailer;
  /** The sender of outgoing mail (MAIL_FROM). */
  mailFrom: string;
  /** The service's own address for links in emails (PUBLIC_URL; invitations, password resets); absent: http://localhost:3000. */
  publicUrl?: string;
  /**
   * The guard of connections to addresses users gave (a mailbox's IMAP server), as the environment
   * configures it (ALLOW_LOOPBACK_HOSTS); absent: the strict rule, loopback refused too.
   */
  outbound?: OutboundGuard;
  /**
   * Called at each step of a job's work; tests throw from it to abort the job there, as a crash
   * would, and then run the job again. Production leaves it unset.
   */
  checkpoint?: (step: string) => void;
  /** The job's attempt (1-based) and its last allowed one: the final attempt records a failure instead of retrying. */
  attempt?: { number: number; max: number };
}

/** The objects a job served or produced, recorded with its outcome in job_history. */
export interface JobRefs {
  runId?: string;
  timesheetId?: string;
  documentId?: string;
  deliveryId?: string;
}

/** Runs `fn` in one transaction of the job's database. */
export async function jobTx<T>(ctx: JobCtx, fn: (ctx: JobCtx) => Promise<T>): Promise<T> {
  return ctx.sql.begin((t) => fn({ ...ctx, sql: t as unknown as Db })) as Promise<T>;
}

export const step = (ctx: JobCtx, name: string) => ctx.checkpoint?.(name);

/** Whether this is the job's last allowed attempt (a call outside any job, with no attempt, is its own last). */
export const isLastAttempt = (ctx: Pick<JobCtx, 'attempt'>) => !ctx.attempt || ctx.attempt.number >= ctx.attempt.max;

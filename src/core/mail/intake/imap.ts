import type { JobCtx } from '../../jobs/ctx.ts';

/**
 * What the poll needs of an IMAP server, and nothing more: the rules of a poll (positions,
 * batches, what to do with each message) are the core's (poll.ts); the protocol client is the
 * worker's (src/jobs/machinery/imap.ts, over imapflow), handed in as a `ConnectImap`.
 */

/** What the mailbox's `lastError` says when connecting failed: the same for a refused, closed, filtered or silent port. */
export const CONNECT_FAILED = 'could not connect to the mail server';
export const HOST_REFUSED = 'the mail server host is not allowed (loopback, private, link-local or metadata address)';
export const LOGIN_REFUSED = 'AUTHENTICATIONFAILED: the mail server refused the login';

export interface ImapAccount {
  id: string;
  host: string;
  port: number;
  secure: boolean;
  username: string;
}

/** The messages a search asks for: the unseen ones; the unseen ones and those received since a time; the UIDs from one on (`uid:*`). */
export type ImapQuery = { kind: 'unseen' } | { kind: 'unseenOrSince'; since: Date } | { kind: 'fromUid'; uid: number };

/** The open folder's identity: its UIDVALIDITY (as text: it is a 32-bit unsigned number) and its next UID. */
export interface OpenFolder {
  uidValidity: string;
  uidNext: number;
  release(): void;
}

/** A message's size and arrival as the server reports them (`internalDate` null when it has none). */
export interface MessageMeta {
  uid: number;
  size: number;
  internalDate: Date | null;
}

/** A message's bytes: its whole source, or only its header block. */
export interface MessageBytes {
  uid: number;
  source: Buffer | null;
  headers: Buffer | null;
}

/** One logged-in IMAP conversation. Every uid is a UID, never a sequence number. */
export interface ImapSession {
  /** Creates the folder; one that exists already is not an error. */
  createFolder(path: string): Promise<void>;
  /** Selects the folder, held until `release()`. */
  openFolder(path: string): Promise<OpenFolder>;
  search(query: ImapQuery): Promise<number[]>;
  fetchMeta(uids: number[]): AsyncIterable<MessageMeta>;
  fetchBytes(uids: number[], part: 'source' | 'headers'): AsyncIterable<MessageBytes>;
  markSeen(uid: number): Promise<void>;
  move(uid: number, to: string): Promise<void>;
  /** Ends the conversation; never throws. */
  logout(): Promise<void>;
}

/**
 * Logs in to the mailbox's server, through the job's outbound guard. A failure throws an Error
 * whose message is one of the constants above, so `lastError` cannot map the network.
 */
export type ConnectImap = (ctx: Pick<JobCtx, 'outbound' | 'log'>, account: ImapAccount, password: string) => Promise<ImapSession>;

import { invalid } from '../errors.ts';

export type TicketRef = { kind: 'id'; id: string } | { kind: 'human'; prefix: string; number: number } | { kind: 'none' };

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const HUMAN = /^([A-Za-z][A-Za-z0-9]{0,19})-(\d{1,9})$/;

/**
 * Parses a `{ref}`: a ticket UUID, or a human id `PREFIX-N` (case-insensitive; any prefix
 * the project ever had, `INBOX` for the Inbox). Over 60 characters is a 400; anything else
 * that cannot name a ticket resolves to nothing (a 404 later).
 */
export function parseTicketRef(raw: string): TicketRef {
  if (raw.length > 60) throw invalid('ref_too_long', { field: 'ref' }, 'A ticket reference is at most 60 characters.');
  if (UUID.test(raw)) return { kind: 'id', id: raw.toLowerCase() };
  const m = HUMAN.exec(raw);
  if (m) return { kind: 'human', prefix: m[1]!.toUpperCase(), number: Number(m[2]) };
  return { kind: 'none' };
}

export function humanId(projectKey: string | null, number: number): string {
  return `${projectKey ?? 'INBOX'}-${number}`;
}

/**
 * The strong ETag of a ticket: its id and `updatedAt`. Every change goes through
 * recordEvents, which moves `updatedAt` by at least one millisecond, so two versions never
 * share a tag. Accepts a TicketPage or TicketSummary (`updatedAt` as ISO string) or the
 * loader's facts (`updatedAt` as Date): both give the same tag for the same version.
 */
export function ticketEtag(t: { id: string; updatedAt: string | Date }): string {
  const ms = t.updatedAt instanceof Date ? t.updatedAt.getTime() : Date.parse(t.updatedAt);
  return `"${t.id}.${ms.toString(36)}"`;
}

/**
 * Whether an `If-None-Match` header value matches `etag` (weak comparison, as RFC 9110 asks for
 * If-None-Match): a list of tags, `W/` prefixes ignored, `*` matches any existing ticket.
 */
export function etagMatches(header: string | undefined | null, etag: string): boolean {
  if (!header) return false;
  return header.split(',').some((raw) => {
    const tag = raw.trim();
    return tag === '*' || tag.replace(/^W\//, '') === etag;
  });
}

import { z } from 'zod';
import { authorize } from '../access/authorize.ts';
import { defineOp } from '../operation.ts';
import { invalid } from '../errors.ts';
import { holdTickets } from '../tickets/concurrency.ts';
import { recordEvent } from '../tickets/events.ts';
import { loadTicket } from '../tickets/load.ts';
import { ticketRef } from '../tickets/schemas.ts';
import { codehostLinkSchema } from '../tickets/page-schema.ts';
import { withReasons } from '../validation.ts';
import { codehostColumns, presentCodehost, type CodehostLink, type CodehostRow } from './present.ts';

/** The only code host: GitHub. Owner: letters, digits, hyphens (≤39); name: letters, digits, `.`, `_`, `-` (≤100). */
export const CODEHOST = 'github.com';
const REPO = /^[A-Za-z0-9][A-Za-z0-9-]{0,38}\/(?!\.{1,2}$)[A-Za-z0-9._-]{1,100}$/;

/** POST /tickets/{ref}/codehost's body. */
export const addCodehostFields = z.object({
  repo: z.string().min(1).max(200).regex(REPO).describe('GitHub repository as "owner/name", e.g. "acme/web"'),
  url: z
    .string()
    .min(1)
    .max(500)
    .describe('https://github.com/<owner>/<name>/... link to the commit or pull request; it must point into the repository given in `repo`'),
  sha: z
    .string()
    .regex(/^[0-9a-fA-F]{7,40}$/)
    .nullish()
    .describe('Commit hash, 7–40 hex characters. Give exactly one of sha or pr'),
  pr: z.number().int().positive().max(2_147_483_647).nullish().describe('Pull request number. Give exactly one of sha or pr'),
});

/** Every malformed field has the contract's own reason. */
export const addCodehostInput = withReasons(addCodehostFields.extend({ ref: ticketRef }), {
  repo: 'repo_format',
  url: 'github_url',
  sha: 'sha_format',
  pr: 'pr_format',
});

/**
 * Whether `raw` is an https URL on github.com inside `repo` (owner and name compared
 * case-insensitively, as GitHub does). No credentials, no port, no other host.
 */
export function isRepoUrl(raw: string, repo: string): boolean {
  if (!raw.startsWith('https://') || /\s/.test(raw)) return false;
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    return false;
  }
  if (u.protocol !== 'https:' || u.hostname !== CODEHOST || u.port !== '' || u.username !== '' || u.password !== '') return false;
  const [owner, name] = repo.toLowerCase().split('/');
  const [, first, second] = u.pathname.split('/');
  return first?.toLowerCase() === owner && second?.toLowerCase().replace(/\.git$/, '') === name;
}

/**
 * POST /tickets/{ref}/codehost. Needs edit rights on the ticket. Stores a reference only (the
 * service never fetches from GitHub). The same commit or pull request on the same ticket is
 * stored once: posting it again answers the stored reference and writes no event.
 */
export const addCodehostLink = defineOp({
  name: 'codehost.add',
  action: 'codehost.add',
  input: addCodehostInput,
  output: codehostLinkSchema,
  tx: true,
  run: async (ctx, { ref, ...data }): Promise<CodehostLink> => {
    const sha = data.sha?.toLowerCase() ?? null;
    const pr = data.pr ?? null;
    if ((sha === null) === (pr === null)) throw invalid('sha_or_pr_required', { field: 'sha' }, 'Give exactly one of sha or pr.');
    if (!isRepoUrl(data.url, data.repo)) {
      throw invalid('github_url', { field: 'url' }, `url must be an https://${CODEHOST}/${data.repo}/... address.`);
    }
    const { sql, principal: p } = ctx;
    const t = await loadTicket(ctx, ref);
    authorize(ctx, 'codehost.add', t);
    await holdTickets(sql, [t.id]);
    const [inserted] = await sql<CodehostRow[]>`
      insert into codehost_links (workspace_id, ticket_id, repo, sha, pr, url, created_by, created_at)
      values (${p.workspaceId}, ${t.id}, ${data.repo}, ${sha}, ${pr}, ${data.url}, ${p.identityId}, ${ctx.now()})
      on conflict (ticket_id, lower(repo), coalesce(sha, ''), coalesce(pr, 0)) do nothing
      returning ${codehostColumns(sql)}`;
    if (!inserted) {
      const [existing] = await sql<CodehostRow[]>`
        select ${codehostColumns(sql)} from codehost_links
        where ticket_id = ${t.id} and lower(repo) = lower(${data.repo}) and coalesce(sha, '') = ${sha ?? ''} and coalesce(pr, 0) = ${pr ?? 0}`;
      return presentCodehost(existing!);
    }
    await recordEvent(
      sql,
      { workspaceId: p.workspaceId, ticketId: t.id, kind: 'codehost_added', actorId: p.identityId, payload: { linkId: inserted.id, repo: data.repo, sha, pr } },
      ctx.now(),
    );
    return presentCodehost(inserted);
  },
});

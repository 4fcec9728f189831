import type { Db } from '../../db/connect.ts';

/** The contract's CodehostLink. */
export interface CodehostLink {
  id: string;
  repo: string;
  sha: string | null;
  pr: number | null;
  url: string;
  createdAt: string;
}

/** A reference as GET /codehost/links lists it, with its ticket. */
export type WorkspaceCodehostLink = CodehostLink & { ticket: { id: string; humanId: string; title: string } };

export interface CodehostRow {
  id: string;
  repo: string;
  sha: string | null;
  pr: number | null;
  url: string;
  createdAt: Date;
}

/** The columns of a CodehostLink, named for `presentCodehost`. */
export function codehostColumns(sql: Db, alias = 'codehost_links') {
  const c = sql(alias);
  return sql`${c}.id, ${c}.repo, ${c}.sha, ${c}.pr, ${c}.url, ${c}.created_at as "createdAt"`;
}

export function presentCodehost(r: CodehostRow): CodehostLink {
  return { id: r.id, repo: r.repo, sha: r.sha, pr: r.pr, url: r.url, createdAt: r.createdAt.toISOString() };
}

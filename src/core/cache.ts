import type { Db } from '../db/connect.ts';
import { ReadAnswers } from './reads/answers.ts';
import { ChangeMarks } from './changes/marks.ts';
import { WholeHoursCache } from './ops/stats-cache.ts';

/**
 * A per-process cache of one value per workspace, dropped at once on every process when
 * the database announces a change on `channel` (NOTIFY with the workspace id), and after
 * `ttlMs` in any case so a missed notification cannot keep a stale value for long.
 */
export class WorkspaceCache<T> {
  private values = new Map<string, { value: Promise<T>; until: number }>();
  private unlisten: (() => Promise<void>) | null = null;

  constructor(
    private channel: string,
    private ttlMs: number,
  ) {}

  async listen(sql: Db): Promise<void> {
    const sub = await sql.listen(
      this.channel,
      (workspaceId) => this.values.delete(workspaceId),
      () => this.values.clear(), // (re)connected: anything may have changed meanwhile
    );
    this.unlisten = () => sub.unlisten();
  }

  async close(): Promise<void> {
    await this.unlisten?.();
  }

  /** Forgets one workspace's value here and now (a change this process just committed; the NOTIFY follows). */
  drop(workspaceId: string): void {
    this.values.delete(workspaceId);
  }

  get(workspaceId: string, load: () => Promise<T>, now = Date.now()): Promise<T> {
    const hit = this.values.get(workspaceId);
    if (hit && hit.until > now) return hit.value;
    const value = load();
    this.values.set(workspaceId, { value, until: now + this.ttlMs });
    value.catch(() => this.values.delete(workspaceId));
    return value;
  }
}

/** The caches a process keeps; absent (no caching) for one-off commands. */
export interface Caches {
  workflow: WorkspaceCache<unknown>;
  changeMarks: ChangeMarks;
  /** Boards, "my work" and first list pages, each answer kept with the read mark it was computed under (core/reads/remembered.ts). */
  readAnswers: ReadAnswers;
  /** The console's job statistics: each workspace's completed hours, kept up to a minute (core/ops/stats-cache.ts). */
  jobStats?: WholeHoursCache;
}

export async function startCaches(sql: Db): Promise<Caches> {
  const workflow = new WorkspaceCache<unknown>('wt_workflow_changed', 60_000);
  await workflow.listen(sql);
  const changeMarks = new ChangeMarks();
  await changeMarks.listen(sql);
  return { workflow, changeMarks, readAnswers: new ReadAnswers(), jobStats: new WholeHoursCache() };
}

export async function stopCaches(c: Caches): Promise<void> {
  await c.workflow.close();
  await c.changeMarks.close();
}

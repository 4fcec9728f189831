import type { Db } from '../../db/connect.ts';

/**
 * Each workspace's change high-water mark as this process last learned it: from NOTIFY
 * `wt_changes` (sent at commit) and from the marks that feed queries read. Every value comes
 * from committed data, so a poller whose `after` is at or past it has nothing new to read
 * and can be answered without a query. A missed notification only leaves the mark low, which
 * sends the next poll to the database: never a skipped change.
 */
export class ChangeMarks {
  private marks = new Map<string, number>();
  private unlisten: (() => Promise<void>) | null = null;

  async listen(sql: Db): Promise<void> {
    const sub = await sql.listen(
      'wt_changes',
      (payload) => {
        const [ws, seq] = payload.split(':');
        if (ws && seq) this.observe(ws, Number(seq));
      },
      () => this.marks.clear(),
    );
    this.unlisten = () => sub.unlisten();
  }

  async close(): Promise<void> {
    await this.unlisten?.();
  }

  observe(workspaceId: string, mark: number): void {
    if (mark > (this.marks.get(workspaceId) ?? -1)) this.marks.set(workspaceId, mark);
  }

  /** True when nothing has been committed in the workspace after `after`, as far as this process knows. */
  caughtUp(workspaceId: string, after: number): boolean {
    const mark = this.marks.get(workspaceId);
    return mark !== undefined && after >= mark;
  }
}

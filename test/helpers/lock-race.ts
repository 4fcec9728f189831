import { connect, type Db } from '../../src/db/connect.ts';

/**
 * Two transactions on connections of their own: `first` writes and stays open; `second` starts its
 * write, which must wait for a lock `first` holds (checked in pg_stat_activity, up to 2 s); then
 * `first` commits and `second` finishes. For triggers that must see a concurrent writer's rows.
 */
export async function secondWaitsForFirst(url: string, first: (tx: Db) => Promise<unknown>, second: (tx: Db) => Promise<unknown>): Promise<void> {
  const [one, two, watch] = [connect(url, { max: 1 }), connect(url, { max: 1 }), connect(url, { max: 1 })];
  try {
    const a = await one.reserve();
    const b = await two.reserve();
    const [pid] = await b<{ pid: number }[]>`select pg_backend_pid() as pid`;
    await a`begin`;
    await first(a as unknown as Db);
    const later = (async () => {
      await b`begin`;
      await second(b as unknown as Db);
      await b`commit`;
    })();
    for (let i = 0; i < 100; i++) {
      const [w] = await watch<{ waiting: boolean }[]>`select wait_event_type = 'Lock' as waiting from pg_stat_activity where pid = ${pid!.pid}`;
      if (w?.waiting) break;
      await new Promise((r) => setTimeout(r, 20));
    }
    await a`commit`;
    await later;
    a.release();
    b.release();
  } finally {
    await Promise.all([one.end(), two.end(), watch.end()]);
  }
}

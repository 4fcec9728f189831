import { migrationsApplied } from '../../db/migrate.ts';
import { isConnectionError } from '../../db/connect.ts';
import type { AppDeps } from '../context.ts';
import { defineRoute } from '../route-table.ts';

/** How long /readyz waits for the database before it says `database_timeout`: a probe must not hang. */
const READY_TIMEOUT_MS = 2000;

let draining = false;

/** Called on SIGTERM: /readyz answers 503 `shutting_down` so a balancer stops sending work here. */
export function markDraining(): void {
  draining = true;
}

type Readiness = { ok: true } | { ok: false; reason: 'migrations_pending' | 'database_unreachable' | 'database_timeout' | 'database_error' | 'shutting_down' };

async function readiness(deps: AppDeps): Promise<Readiness> {
  if (draining) return { ok: false, reason: 'shutting_down' };
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<Readiness>((resolve) => {
    timer = setTimeout(() => resolve({ ok: false, reason: 'database_timeout' }), READY_TIMEOUT_MS);
  });
  const check = migrationsApplied(deps.sql).then(
    (ready): Readiness => (ready ? { ok: true } : { ok: false, reason: 'migrations_pending' }),
    (err: unknown): Readiness => ({ ok: false, reason: isConnectionError(err) ? 'database_unreachable' : 'database_error' }),
  );
  try {
    return await Promise.race([check, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** /healthz: the process answers. /readyz: the database answers and every migration is applied. */
export const healthRoutes = [
  defineRoute({
    method: 'GET',
    path: '/healthz',
    action: 'public',
    input: {},
    output: null,
    handler: ({ ctx }) => {
      ctx.body = { ok: true };
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/readyz',
    action: 'public',
    input: {},
    output: null,
    handler: async ({ ctx, deps }) => {
      const state = await readiness(deps);
      ctx.status = state.ok ? 200 : 503;
      if (!state.ok) ctx.set('Retry-After', '5');
      ctx.body = state;
    },
  }),
];

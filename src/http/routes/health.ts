import { migrationsApplied } from '../../db/migrate.ts';
import { isConnectionError } from '../../db/connect.ts';
import type { AppDeps } from '../context.ts';
import { defineRoute } from '../route-table.ts';
import { okSchema } from '../../core/response-schema.ts';
import { z } from 'zod';

/** How long /readyz waits for the database before it says `database_timeout`: a probe must not hang. */
const READY_TIMEOUT_MS = 2000;

let draining = false;

/** Called on SIGTERM: /readyz answers 503 `shutting_down` so a balancer stops sending work here. */
export function markDraining(): void {
  draining = true;
}

const NOT_READY = ['migrations_pending', 'database_unreachable', 'database_timeout', 'database_error', 'shutting_down'] as const;
type Readiness = { ok: true } | { ok: false; reason: (typeof NOT_READY)[number] };

/** /readyz's 503: not ready, and why (a `Retry-After: 5` header comes with it). */
const notReadySchema = z.object({ ok: z.literal(false), reason: z.enum(NOT_READY) }).meta({ id: 'NotReady' });

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
    output: okSchema,
    handler: ({ ctx }) => {
      ctx.body = { ok: true };
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/readyz',
    action: 'public',
    input: {},
    output: { 200: okSchema, 503: notReadySchema },
    handler: async ({ ctx, deps }) => {
      const state = await readiness(deps);
      ctx.status = state.ok ? 200 : 503;
      if (!state.ok) ctx.set('Retry-After', '5');
      ctx.body = state;
    },
  }),
];

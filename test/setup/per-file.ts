import { setPasswordHashCost } from '../../src/core/auth/secrets.ts';
import { checkStatementShapes } from '../../src/db/statement-shapes.ts';

/**
 * Runs before every test file (vitest.config.ts `setupFiles`). Workers are reused from one file to
 * the next (`isolate: false`: a fresh fork per file cost ~2 CPU-seconds of start-up and imports), so
 * what a file could leave behind in the process is put back here, and each file still starts as it
 * would in a fork of its own:
 * - the environment: some files set `process.env.WT_SECRET_KEY` and the like at import, and every
 *   later `loadConfig(process.env)` would read it. Each file starts from the worker's first
 *   environment (kept on globalThis).
 * - modules are NOT evaluated again per file (session 9): src and the helpers stay loaded from one
 *   file to the next, as node_modules always did. Re-evaluating them after `vi.resetModules()` cost
 *   ~0.3 CPU-s a file (the whole suite: forks' CPU 261 -> 214 s, vitest's summed import 163 -> 63 s,
 *   3075 of 3075 passed). What src keeps at module level is read-only or a cache of values that
 *   do not depend on the file (compiled SQL text per pool, the OpenAPI document, MCP surfaces by
 *   their shape, the secret box per key, formatters, rendered Markdown); `draining` in
 *   src/http/routes/health.ts is set only by src/main.ts's SIGTERM handler, which no test runs in
 *   its own process; configuration is read from the environment only by `loadConfig`, when an app
 *   starts. A module that must start fresh for each file would need `vi.resetModules()` back here.
 * And the passwords the tests make are hashed at a lower scrypt cost (N 1024, written into the hash;
 * the production N took ~40 ms of CPU a person, thousands of people a run): test/password-hash.test.ts
 * checks the production parameters, and processes the tests start hash at the production cost.
 */
const KEY = Symbol.for('wt.test.pristineEnv');
const store = globalThis as unknown as Record<symbol, Record<string, string> | undefined>;
const pristine = (store[KEY] ??= { ...(process.env as Record<string, string>) });
// vitest's own (VITEST_WORKER_ID, VITEST_POOL_ID, ...) are its to set for each file
const ours = (name: string) => !name.startsWith('VITEST');
for (const name of Object.keys(process.env)) if (ours(name) && !(name in pristine)) delete process.env[name];
for (const [name, value] of Object.entries(pristine)) if (ours(name) && process.env[name] !== value) process.env[name] = value;

setPasswordHashCost(1024);

// every statement remembered by its shape is built afresh and compared with it (src/db/statement-shapes.ts)
checkStatementShapes(true);

import { afterAll, vi } from 'vitest';
import { setPasswordHashCost } from '../../src/core/auth/secrets.ts';

/**
 * Runs before every test file (vitest.config.ts `setupFiles`). Workers are reused from one file to
 * the next (`isolate: false`: a fresh fork per file cost ~2 CPU-seconds of start-up and imports), so
 * what a file could leave behind in the process is put back here, and each file still starts as it
 * would in a fork of its own:
 * - the environment: some files set `process.env.WT_SECRET_KEY` and the like at import, and every
 *   later `loadConfig(process.env)` would read it. Each file starts from the worker's first
 *   environment (kept on globalThis, which outlives the module reset below).
 * - module state of src and of the test helpers (`draining` in src/http/routes/health.ts, the
 *   secret-box cache, the MCP surfaces, ...): after the file, every module except vitest's own is
 *   dropped, so the next file evaluates its imports afresh (Node keeps node_modules loaded, which is
 *   most of the saving).
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

afterAll(() => {
  vi.resetModules();
});

import path from 'node:path';
import { inject } from 'vitest';
import { cleanEnv, spawnGroup, type Spawned } from './spawn.ts';

/**
 * Starts one role (`web` or `worker`) as its own process group, no npm in between, from src/ as
 * JavaScript files (test/setup/compiled.ts: the same transform tsx makes, done once per run).
 */
export function spawnRole(role: 'web' | 'worker', env: Record<string, string>): Spawned {
  return spawnGroup('node', [path.join(inject('compiledSrc'), 'main.js'), role], cleanEnv(env));
}

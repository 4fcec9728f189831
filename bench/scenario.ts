import type { Demo } from '../src/core/demo/seed.ts';
import type { Db } from '../src/db/connect.ts';
import type { Measured } from './lib.ts';
import type { BigWorkspace } from './seed.ts';

/** What a bench scenario is given and answers (bench/run.ts runs them; each scenario file imports only this). */
export interface BenchEnv {
  api: string;
  bare: string;
  sql: Db;
  dbUrl: string;
  demo: Demo;
  /** The 100,000-ticket workspace, seeded when a chosen scenario needs it. */
  big: BigWorkspace | null;
}

export interface Scenario {
  name: string;
  /** Needs the large seeded workspace (bench/seed.ts). */
  needsBig?: boolean;
  run: (env: BenchEnv) => Promise<{ rows: Measured[]; notes: string[] }>;
}

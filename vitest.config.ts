import { BaseSequencer, type TestSpecification } from 'vitest/node';
import { defineConfig } from 'vitest/config';

/**
 * The files that take longest, started first whatever vitest's own order (the last run's durations
 * from its cache, else file size on a clean clone): with several files running at once, a long
 * one started late is the whole suite's tail. A name missing here only costs time, never a check.
 */
const LONGEST = [
  // by their duration in two whole runs at four files at once (session 9: a clean-clone CI run and a quiet run)
  'delivery-kill',
  'authz-matrix',
  'ops-console',
  'ops-setup',
  'ops-phone',
  'cli',
  'mcp-stdio',
  'documents-pdf-pool',
  'crash-safety',
  'ops-job-controls-browser',
  'outage',
  'fuzz',
  'mcp-inspector',
  'authz-tenancy',
  'startup-checks',
  'mail-settings',
  'audit-doors',
  'people-admin',
  'mail-intake',
  'documents-pdf',
  'mail-hostile-headers',
  'visibility-matrix',
  'cli-setup',
  'invitations',
  'build',
  'start',
];

class LongestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const rank = (f: TestSpecification) => {
      const at = LONGEST.findIndex((name) => f.moduleId.endsWith(`/test/${name}.test.ts`));
      return at === -1 ? LONGEST.length : at;
    };
    return sorted
      .map((f, i) => ({ f, i, r: rank(f) }))
      .sort((a, b) => a.r - b.r || a.i - b.i)
      .map(({ f }) => f);
  }
}

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/setup/global.ts'],
    pool: 'forks',
    // A fork serves file after file: a fresh fork per file (`isolate: true`) spent ~2 CPU-seconds on
    // start-up and imports, a third of the suite's CPU. Each file still starts clean:
    // test/setup/per-file.ts restores the environment and drops every module after the file.
    isolate: false,
    setupFiles: ['test/setup/per-file.ts'],
    // Files spend most of their time waiting (PostgreSQL, Chromium, SMTP and IMAP servers, child
    // processes, timers), each on a database of its own (test/helpers/db.ts) and free ports: several
    // run at once. vitest's default, availableParallelism() - 1, ran one at a time on two cores.
    maxWorkers: 4,
    sequence: { sequencer: LongestFirst },
    // Bounds only against a hang: on a loaded 2-core machine, four files at once, a property test
    // that takes 4 s alone took over 30 s.
    testTimeout: 120_000,
    hookTimeout: 180_000,
    reporters: ['default', ['json', { outputFile: '.vitest-results.json' }]],
  },
});

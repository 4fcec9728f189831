import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/setup/global.ts'],
    pool: 'forks',
    testTimeout: 30_000,
    hookTimeout: 90_000,
    reporters: ['default', ['json', { outputFile: '.vitest-results.json' }]],
  },
});

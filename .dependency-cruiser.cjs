/**
 * The layering of src, checked by `npm run check` (dependency-cruiser). docs/decisions.md
 * ("Architecture rules as a check") says why each rule exists.
 *
 * - src/core holds rules and SQL; it defines small interfaces for machinery and imports none.
 * - The adapters (http, mcp, ops, jobs, cli) adapt the core to one door each and never import each
 *   other; what two of them share lives in src/web (the Koa pieces) or in the core.
 * - src/main.ts, src/cli/main.ts and src/app.ts are the composition roots: they may wire everything.
 * - Type-only imports count: a circle of types is still a tangle a reader has to hold at once.
 */

const ADAPTERS = '(http|mcp|ops|jobs|cli)';
/** Packages that drive a process, a socket or a browser: they belong at the edge, never in the core. */
const MACHINERY = [
  'koa',
  '@koa/router',
  'koa-body',
  '@modelcontextprotocol/sdk',
  'graphile-worker',
  'playwright-core',
  'nodemailer',
  'smtp-server',
  'imapflow',
  'oidc-provider',
];
const machineryPath = `^node_modules/(${MACHINERY.map((m) => m.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')).join('|')})/`;

module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'No import circle in src, type-only imports included.',
      from: { path: '^src/' },
      to: { circular: true },
    },
    {
      name: 'core-imports-no-adapter',
      severity: 'error',
      comment: 'The core holds rules and SQL; the doors (and the shared web layer) depend on it, never the reverse.',
      from: { path: '^src/core/' },
      to: { path: [`^src/${ADAPTERS}/`, '^src/web/', '^src/(main|app)\\.ts$'] },
    },
    {
      name: 'core-imports-no-machinery',
      severity: 'error',
      comment:
        'Chromium, SMTP, IMAP, Koa, MCP and the job queue live at the edge behind interfaces the core defines. ' +
        "One exception: nodemailer's addressparser, a pure function, read only by core/mail/address.ts, so the core " +
        'and the sender agree on what one address is.',
      from: { path: '^src/core/', pathNot: '^src/core/mail/address\\.ts$' },
      to: { path: machineryPath },
    },
    {
      name: 'core-address-parser-only',
      severity: 'error',
      comment: 'core/mail/address.ts may read nodemailer only for its address parser.',
      from: { path: '^src/core/mail/address\\.ts$' },
      to: { path: machineryPath, pathNot: '^node_modules/nodemailer/(lib|dist/[a-z]+)/addressparser/' },
    },
    {
      name: 'core-reads-no-config',
      severity: 'error',
      comment: 'Configuration is passed in: the core may name the Config type, never load it (loadConfig belongs to the composition roots).',
      from: { path: '^src/core/' },
      to: { path: '^src/config\\.ts$', dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'adapter-imports-no-other-adapter',
      severity: 'error',
      comment: 'No adapter imports another; the composition roots (src/main.ts, src/cli/main.ts, src/app.ts) wire them.',
      from: { path: `^src/${ADAPTERS}/`, pathNot: '^src/cli/main\\.ts$' },
      to: { path: `^src/${ADAPTERS}/`, pathNot: '^src/$1/' },
    },
    {
      name: 'web-layer-imports-no-adapter',
      severity: 'error',
      comment: 'src/web is shared by the two Koa adapters; it cannot lean on either.',
      from: { path: '^src/web/' },
      to: { path: [`^src/${ADAPTERS}/`, '^src/(main|app)\\.ts$'] },
    },
    {
      name: 'src-imports-no-tests',
      severity: 'error',
      comment: 'Tests and benchmarks sit apart: the shipped code never reaches into them.',
      from: { path: '^src/' },
      to: { path: '^(test|bench)/' },
    },
    {
      name: 'not-to-unresolvable',
      severity: 'error',
      comment: 'An import the cruiser cannot resolve would hide a dependency from every rule above.',
      from: { path: '^src/' },
      to: { couldNotResolve: true },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    includeOnly: '^(src|test|bench|node_modules)/',
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default', 'types'],
      mainFields: ['module', 'main', 'types', 'typings'],
    },
    skipAnalysisNotInRules: true,
  },
};

import { formatProblems, lintFromString, loadConfig } from '@redocly/openapi-core';
import { buildOpenApi } from '../src/http/openapi/document.ts';
import { REST_API } from '../src/http/routes/index.ts';

/**
 * Lints the OpenAPI document the app serves, built from the route table, with the committed
 * redocly.yaml (Redocly's own rule set; `@redocly/cli lint` without a file to keep in sync).
 */
const config = await loadConfig({ configPath: new URL('../redocly.yaml', import.meta.url).pathname });
const problems = await lintFromString({ source: JSON.stringify(buildOpenApi(REST_API)), absoluteRef: 'openapi.json', config });
formatProblems(problems, { format: 'stylish', totals: { errors: 0, warnings: 0, ignored: 0 }, version: 'lint', maxProblems: 50 });
const errors = problems.filter((p) => p.severity === 'error').length;
console.log(`${problems.length} problem(s), ${errors} error(s)`);
process.exit(errors ? 1 : 0);

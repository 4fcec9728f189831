import { expect, it } from 'vitest';
import { buildApp } from '../src/app.ts';
import { loadConfig } from '../src/config.ts';
import type { AppDeps } from '../src/http/context.ts';
import { ROUTE_TABLE } from '../src/http/routes/index.ts';
import { makeLogger } from '../src/log.ts';

/**
 * Issue 25 ("No write per read"): what every request pays in the HTTP layer before its route runs.
 * The app is built with inert dependencies (building routers touches neither database nor network).
 */

interface Layer {
  path: string | RegExp;
  methods: string[];
}

function appRouters(): Layer[][] {
  const config = loadConfig({ ...process.env, LOG_LEVEL: 'silent', DATABASE_URL: process.env.DATABASE_URL ?? 'postgres://unused@127.0.0.1/unused' });
  const app = buildApp({ sql: {}, config, log: makeLogger('silent'), verifier: {} } as unknown as AppDeps);
  return (app.middleware as { router?: { stack: Layer[] } }[]).flatMap((mw) => (mw.router ? [mw.router.stack] : []));
}

it('the REST API is one router: a request is matched once, not once per area, and passes no per-area layer', () => {
  const routers = appRouters();
  // MCP's endpoint and the REST API; a router per area (six root groups and the workspace router) each matched every request
  expect(routers).toHaveLength(2);
  const rest = routers.find((stack) => stack.some((l) => l.path === '/api/w/:slug/tickets'))!;
  // each area's allowedMethods, mounted inside the workspace router, was a layer every workspace request ran through
  expect(rest.filter((l) => l.methods.length === 0)).toEqual([]);
  expect(rest).toHaveLength(ROUTE_TABLE.length);
});

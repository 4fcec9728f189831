import type Koa from 'koa';
import { loadConfig } from '../../src/config.ts';
import { buildApp } from '../../src/app.ts';
import type { AppDeps } from '../../src/http/context.ts';
import { makeLogger } from '../../src/log.ts';

/** One route of the app: its method and its router path (`/api/w/:slug/tickets/:ref`). */
export interface Route {
  method: string;
  path: string;
  /** Names of the path parameters, in order. */
  params: string[];
  key: string;
}

interface Layer {
  path: string | RegExp;
  methods: string[];
}

/**
 * The route table of the real app, read from the @koa/router layers that buildApp mounts
 * (each router's dispatch middleware carries `.router`; nested routers are flattened into their
 * parent's stack with the prefix applied). HEAD is implied by GET and left out; layers without
 * methods are `use()` middleware. So a route added anywhere in src/http shows up here by itself.
 */
export function routesOf(app: Koa<any>): Route[] {
  const seen = new Map<string, Route>();
  for (const mw of app.middleware as ((...a: unknown[]) => unknown)[]) {
    const router = (mw as { router?: { stack: Layer[] } }).router;
    if (!router) continue;
    for (const layer of router.stack) {
      if (typeof layer.path !== 'string') continue;
      for (const method of layer.methods) {
        if (method === 'HEAD') continue;
        const key = `${method} ${layer.path}`;
        if (!seen.has(key)) seen.set(key, { method, path: layer.path, params: [...layer.path.matchAll(/:([A-Za-z]+)/g)].map((m) => m[1]!), key });
      }
    }
  }
  return [...seen.values()];
}

/** The routes of an app built with inert dependencies: building routers touches neither database nor network. */
export function appRoutes(): Route[] {
  const config = loadConfig({ ...process.env, LOG_LEVEL: 'silent', DATABASE_URL: process.env.DATABASE_URL ?? 'postgres://unused@127.0.0.1/unused' });
  const deps = { sql: {}, config, log: makeLogger('silent'), verifier: {} } as unknown as AppDeps;
  const routes = routesOf(buildApp(deps));
  if (routes.length < 20) throw new Error(`found only ${routes.length} routes in the app: has buildApp stopped mounting @koa/router routers?`);
  return routes;
}

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HOME_CSP, homePage } from '../src/http/routes/home.ts';
import { startTestApp, type TestApp } from './helpers/app.ts';
import { rawRequest } from './helpers/raw.ts';

/** The landing page at `/` (issue 26): the banner's address answers with links to every door, not 404. */
let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(async () => {
  await app.close();
});

describe('GET /', () => {
  it('answers an HTML page linking the console, the API reference, the OpenAPI document, MCP and health', async () => {
    const res = await rawRequest(app.base, 'GET', '/');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
    for (const href of ['/ops', '/api/docs', '/api/openapi.json', '/healthz', '/readyz']) expect(res.body).toContain(`href="${href}"`);
    expect(res.body).toContain(`${app.base}/mcp`);
    expect(res.body).toContain('npx wt mcp');
  });

  it('carries the console’s security headers and a policy that allows no script', async () => {
    const res = await rawRequest(app.base, 'GET', '/');
    expect(res.headers['content-security-policy']).toBe(HOME_CSP);
    expect(HOME_CSP).toContain("script-src 'none'");
    expect(HOME_CSP).toContain("frame-ancestors 'none'");
    expect(res.headers['x-content-type-options']).toBe('nosniff');
    expect(res.headers['x-frame-options']).toBe('DENY');
    expect(res.headers['referrer-policy']).toBe('no-referrer');
    expect(res.headers['cache-control']).toBe('no-store');
  });

  it('prints the Host it was asked under escaped: a hostile Host header cannot add markup', async () => {
    const res = await rawRequest(app.base, 'GET', '/', { headers: { host: 'x"><script>alert(1)</script>' } });
    expect(res.status).toBe(200);
    expect(res.body).not.toContain('<script>');
    expect(res.body).toContain('x&quot;&gt;&lt;script&gt;alert(1)&lt;/script&gt;');
    const page = homePage(`http://a'b&c<d>`);
    expect(page).toContain('http://a&#39;b&amp;c&lt;d&gt;/mcp');
  });

  it('is public and answers HEAD without a body; other methods are 405', async () => {
    const head = await rawRequest(app.base, 'HEAD', '/');
    expect(head.status).toBe(200);
    expect(head.body).toBe('');
    const post = await rawRequest(app.base, 'POST', '/');
    expect(post.status).toBe(405);
  });
});

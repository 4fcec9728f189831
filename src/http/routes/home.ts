import { defineRoute } from '../route-table.ts';
import { escapeHtml } from '../../core/html.ts';

/** The console's policy (src/ops/console.ts) minus scripts: the page is links and text, styled by the console's sheet. */
export const HOME_CSP =
  "default-src 'none'; script-src 'none'; style-src 'self'; img-src 'self' data:; connect-src 'self'; form-action 'none'; frame-ancestors 'none'; base-uri 'none'";

/**
 * The landing page at `/`: where the start-up banner points, so it links every door the service has.
 * `origin` is the request's own (its Host header, untrusted): it is only ever printed escaped, as text.
 */
export function homePage(origin: string): string {
  const o = escapeHtml(origin);
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Work tracker</title>
<link rel="stylesheet" href="/ops/static/ops.css">
</head>
<body>
<main>
<h1>Work tracker</h1>
<ul>
<li><a href="/ops">Console</a> (/ops): jobs, billing runs, documents and operators, for a signed-in owner or admin.</li>
<li><a href="/api/docs">API reference</a> (/api/docs), from the <a href="/api/openapi.json">OpenAPI 3.1 document</a> (/api/openapi.json). REST lives under /api/w/{slug}/; send <code>Authorization: Bearer wt_…</code>, or log in with <code>POST /api/auth/login</code> and send the answer's <code>csrfToken</code> as <code>X-CSRF-Token</code> with every write.</li>
<li>MCP (/mcp): point an assistant's Streamable HTTP transport at <code>${o}/mcp</code> with the header <code>Authorization: Bearer wt_…</code>, or run <code>WT_TOKEN=wt_… npx wt mcp</code> for stdio.</li>
<li>Health: <a href="/healthz">/healthz</a> (process up), <a href="/readyz">/readyz</a> (database reachable, migrations applied).</li>
</ul>
</main>
</body>
</html>
`;
}

/** `GET /`: the landing page. Public, like the reference it links. */
export const homeRoutes = [
  defineRoute({
    method: 'GET',
    path: '/',
    action: 'public',
    input: {},
    output: { 200: { file: ['text/html'] } },
    handler: ({ ctx }) => {
      ctx.type = 'text/html; charset=utf-8';
      ctx.set('Content-Security-Policy', HOME_CSP);
      ctx.body = homePage(`${ctx.protocol}://${ctx.host}`);
    },
  }),
];

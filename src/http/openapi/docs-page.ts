import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

/**
 * The API reference page at /api/docs: Swagger UI (swagger-ui-dist, the project's own static
 * build: no CDN, no fonts or validator fetched from elsewhere) rendering /api/openapi.json.
 * Swagger UI was chosen over Redoc and Scalar because its dist is plain static files with no
 * build step and loads nothing from another origin once the validator badge is off.
 */
const DIST = dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));

/** The files the page loads, by the name it asks for: the viewer's two, and the start script (a file, so the CSP needs no inline script). */
const ASSETS: Record<string, { type: string; file?: string; text?: string }> = {
  'swagger-ui.css': { type: 'text/css; charset=utf-8', file: 'swagger-ui.css' },
  'swagger-ui-bundle.js': { type: 'text/javascript; charset=utf-8', file: 'swagger-ui-bundle.js' },
  'start.js': {
    type: 'text/javascript; charset=utf-8',
    text: `window.addEventListener('load', function () {
  window.ui = SwaggerUIBundle({ url: '/api/openapi.json', dom_id: '#api', validatorUrl: null, deepLinking: true, tryItOutEnabled: false });
});
`,
  },
};

export const DOCS_PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Work tracker REST API</title>
<link rel="stylesheet" href="/api/docs/swagger-ui.css">
</head>
<body>
<div id="api"></div>
<script src="/api/docs/swagger-ui-bundle.js"></script>
<script src="/api/docs/start.js"></script>
</body>
</html>
`;

/** Scripts and styles from this origin only; Swagger UI sets inline styles and shows data: images. */
export const DOCS_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; font-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

const cache = new Map<string, Buffer>();

/** An asset's body and content type, or null when the page does not load such a file. */
export async function docsAsset(name: string): Promise<{ type: string; body: Buffer } | null> {
  if (!Object.hasOwn(ASSETS, name)) return null;
  const asset = ASSETS[name]!;
  let body = cache.get(name);
  if (!body) {
    body = asset.file ? await readFile(join(DIST, asset.file)) : Buffer.from(asset.text ?? '');
    cache.set(name, body);
  }
  return { type: asset.type, body };
}

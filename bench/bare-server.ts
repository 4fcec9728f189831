import Koa from 'koa';
import postgres from 'postgres';

/**
 * The baseline: a bare Koa handler that answers the same JSON as the route under test,
 * with no authentication, no middleware and no database on the request path.
 * Usage: tsx bench/bare-server.ts <port> <databaseUrl> <slug>
 * - `GET /`: the workflow's JSON (GET /workflow's answer).
 * - `PUT /bytes/<name>` then `GET /bytes/<name>`: any other answer the bench hands it (a list page
 *   as the API answered it), sent back as the same bytes: the cost of HTTP alone for that answer.
 */
const [port, url, slug] = process.argv.slice(2);
const sql = postgres(url!, { max: 1 });
const [ws] = await sql`select id from workspaces where slug = ${slug!}`;
const { getWorkflow } = await import('../src/core/workflow/get.ts');
const { runOp } = await import('../src/core/operation.ts');
// A read token of an owner: the same workflow JSON the route answers (the core authorizes every read).
const principal = { workspaceId: ws!.id, role: 'owner', via: 'token', scopes: new Set(['read']), projectIds: null, clientId: null } as never;
const body = JSON.stringify(await runOp(getWorkflow, { sql, now: () => new Date(), principal }, {}));
await sql.end();

const bytes = new Map<string, Buffer>();
const app = new Koa();
app.use(async (ctx) => {
  ctx.type = 'application/json';
  const name = ctx.path.startsWith('/bytes/') ? ctx.path.slice('/bytes/'.length) : null;
  if (name === null) ctx.body = body;
  else if (ctx.method === 'PUT') {
    const chunks: Buffer[] = [];
    for await (const c of ctx.req) chunks.push(c as Buffer);
    bytes.set(name, Buffer.concat(chunks));
    ctx.status = 204;
  } else if (bytes.has(name)) ctx.body = bytes.get(name);
  else ctx.status = 404;
});
app.listen(Number(port), '127.0.0.1', () => console.log('ready'));

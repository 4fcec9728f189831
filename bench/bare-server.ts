import Koa from 'koa';
import postgres from 'postgres';

/**
 * The baseline: a bare Koa handler that answers the same JSON as the route under test,
 * with no authentication, no middleware and no database on the request path.
 * Usage: tsx bench/bare-server.ts <port> <databaseUrl> <slug>
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

const app = new Koa();
app.use((ctx) => {
  ctx.type = 'application/json';
  ctx.body = body;
});
app.listen(Number(port), '127.0.0.1', () => console.log('ready'));

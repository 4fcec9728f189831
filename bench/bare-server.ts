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
const body = JSON.stringify(await getWorkflow({ sql, now: () => new Date(), principal: { workspaceId: ws!.id } as never }));
await sql.end();

const app = new Koa();
app.use((ctx) => {
  ctx.type = 'application/json';
  ctx.body = body;
});
app.listen(Number(port), '127.0.0.1', () => console.log('ready'));

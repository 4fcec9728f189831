import Koa from 'koa';
import postgres from 'postgres';

/**
 * The baseline: a bare Koa handler that answers the same JSON as the route under test,
 * with no authentication and no middleware on the request path.
 * Usage: tsx bench/bare-server.ts <port> <databaseUrl> <slug>
 * - `GET /`: the workflow's JSON (GET /workflow's answer).
 * - `PUT /bytes/<name>` then `GET /bytes/<name>`: any other answer the bench hands it (a list page
 *   as the API answered it), sent back as the same bytes: the cost of HTTP alone for that answer.
 * - `PUT /statements/<name>` (a JSON array of `{query, params}`) then `GET /sql/<name>`: runs those
 *   statements one after the other (prepared, their rows kept as bytes, as the service reads its
 *   answers) and then answers the bytes of `<name>`: the cost of HTTP and the same SQL from one
 *   more process, what no server of these statements can go under on this machine.
 */
const [port, url, slug] = process.argv.slice(2);
// up to 4 connections: the bench's "same SQL over HTTP" floor is measured at 4 concurrent connections too
const sql = postgres(url!, { max: 4 });
const [ws] = await sql`select id from workspaces where slug = ${slug!}`;
const { getWorkflow } = await import('../src/core/workflow/get.ts');
const { runOp } = await import('../src/core/operation.ts');
// A read token of an owner: the same workflow JSON the route answers (the core authorizes every read).
const principal = { workspaceId: ws!.id, role: 'owner', via: 'token', scopes: new Set(['read']), projectIds: null, clientId: null } as never;
const body = JSON.stringify(await runOp(getWorkflow, { sql, now: () => new Date(), principal }, {}));

interface Statement {
  query: string;
  params: unknown[];
}
const bytes = new Map<string, Buffer>();
const statements = new Map<string, Statement[]>();
const read = async (req: NodeJS.ReadableStream) => {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  return Buffer.concat(chunks);
};
const app = new Koa();
app.use(async (ctx) => {
  ctx.type = 'application/json';
  const [, kind, name] = /^\/(bytes|statements|sql)\/(.+)$/.exec(ctx.path) ?? [];
  if (!kind || !name) ctx.body = body;
  else if (ctx.method === 'PUT') {
    const sent = await read(ctx.req);
    if (kind === 'bytes') bytes.set(name, sent);
    else statements.set(name, JSON.parse(sent.toString('utf8')) as Statement[]);
    ctx.status = 204;
  } else if (!bytes.has(name) || (kind === 'sql' && !statements.has(name))) ctx.status = 404;
  else {
    if (kind === 'sql') for (const s of statements.get(name)!) await sql.unsafe(s.query, s.params as never[], { prepare: true }).raw();
    ctx.body = bytes.get(name);
  }
});
app.listen(Number(port), '127.0.0.1', () => console.log('ready'));

import { request } from 'node:http';

export interface RawReply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
}

/**
 * Sends exactly what it is given over node:http (any method, raw path bytes, any body bytes and
 * headers; fetch refuses TRACE and normalises URLs). A request that gets no answer in `timeoutMs`
 * is status 0.
 */
export function sendRaw(
  base: string,
  method: string,
  path: string,
  headers: Record<string, string>,
  body: Buffer | undefined,
  timeoutMs = 15_000,
): Promise<RawReply> {
  const url = new URL(base);
  return new Promise((resolve) => {
    const h: Record<string, string> = { ...headers };
    if (body) h['content-length'] = String(body.length);
    const req = request({ host: url.hostname, port: url.port, method, path, headers: h, timeout: timeoutMs, agent: false }, (res) => {
      // An event stream (GET /mcp) stays open by design: its head is the answer.
      if (String(res.headers['content-type'] ?? '').startsWith('text/event-stream')) {
        req.destroy();
        return resolve({ status: res.statusCode ?? 0, headers: res.headers, text: '' });
      }
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text: Buffer.concat(chunks).toString('utf8') }));
    });
    req.on('timeout', () => {
      req.destroy();
      resolve({ status: 0, headers: {}, text: 'no answer (timeout)' });
    });
    // The server may answer (413, 415) and close before reading the whole body: keep its answer.
    req.on('error', (err) => resolve({ status: -1, headers: {}, text: `connection error: ${err.message}` }));
    if (body) req.end(body);
    else req.end();
  });
}

/** Markers of internals that must never reach a client: stack frames, file paths, SQL errors. */
export const INTERNALS = [
  /\bat \/|\bat file:\/\//,
  /node_modules/,
  /\/work\/|\/src\/(core|http|mcp)\//,
  /\.ts:\d+/,
  /syntax error at/i,
  /violates/i,
  /relation "/i,
  /invalid input syntax/i,
  /duplicate key value/i,
  /PostgresError/,
  /TypeError|ReferenceError|RangeError/,
];

export function internalsIn(text: string): string[] {
  return INTERNALS.filter((re) => re.test(text)).map(String);
}

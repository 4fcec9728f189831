import { request } from 'node:http';

export interface RawResult {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  /** Parsed JSON when the response says JSON, else the text. */
  body: any;
}

/**
 * A request through node:http, which (unlike fetch) sends any method (TRACE, PROPFIND), any
 * Latin-1 header bytes and a body exactly as given, with a Content-Length of its bytes.
 */
export function rawRequest(
  base: string,
  method: string,
  path: string,
  opts: { headers?: Record<string, string>; body?: Buffer | string } = {},
): Promise<RawResult> {
  const url = new URL(path, base);
  const body = opts.body === undefined ? undefined : Buffer.from(opts.body);
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: url.hostname,
        port: url.port,
        method,
        path: url.pathname + url.search,
        headers: { ...opts.headers, ...(body ? { 'content-length': String(body.length) } : {}) },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          const json = (res.headers['content-type'] ?? '').includes('json') && text !== '';
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body: json ? JSON.parse(text) : text });
        });
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

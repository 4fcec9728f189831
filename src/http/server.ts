import { randomUUID } from 'node:crypto';
import type { Server } from 'node:http';
import net from 'node:net';

/** Node's names for what its HTTP parser refused before the app could run. */
const refusals: Record<string, { status: number; code: string; reason: string; message: string }> = {
  HPE_HEADER_OVERFLOW: { status: 431, code: 'invalid', reason: 'headers_too_large', message: 'The request line or headers are too large.' },
  ERR_HTTP_REQUEST_TIMEOUT: { status: 408, code: 'invalid', reason: 'request_timeout', message: 'The request was not completed in time.' },
};

/**
 * A request Node's HTTP parser refuses (malformed request line, unknown method, headers over
 * 16 KB, a body shorter than its Content-Length) never reaches Koa; Node would answer a bare
 * status line. This answers the same status in the error envelope, with a request id.
 */
export function envelopeClientErrors(server: Server): void {
  server.on('clientError', (err: NodeJS.ErrnoException, socket: net.Socket) => {
    if (!socket.writable || err.code === 'ECONNRESET') {
      socket.destroy();
      return;
    }
    const r = refusals[err.code ?? ''] ?? { status: 400, code: 'invalid', reason: 'bad_request', message: 'The request could not be parsed.' };
    const body = JSON.stringify({ error: { code: r.code, message: r.message, details: { reason: r.reason } } });
    socket.end(
      `HTTP/1.1 ${r.status} ${r.status === 431 ? 'Request Header Fields Too Large' : r.status === 408 ? 'Request Timeout' : 'Bad Request'}\r\n` +
        `Content-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
        `X-Request-Id: ${randomUUID()}\r\nConnection: close\r\n\r\n${body}`,
    );
  });
}

/**
 * How long an idle kept-alive connection stays open: longer than the idle timeout of the balancers
 * in front (60 s for AWS ALB and most others), so that the balancer, not this server, closes an
 * idle connection, and never while it sends a request on it. Headers get one second more, as Node
 * requires headersTimeout > keepAliveTimeout for the same reason.
 */
export const KEEP_ALIVE_TIMEOUT_MS = 65_000;
export const HEADERS_TIMEOUT_MS = 66_000;

/**
 * After shutdown begins, idle kept-alive connections stay open this long, so that a request a
 * client already sent on one is answered (with `Connection: close`) rather than reset.
 */
export const IDLE_GRACE_MS = 2_000;

const draining = new WeakSet<Server>();

/** Starts the HTTP server of the app with the envelope for parser-level refusals. */
export function listen(app: { listen(port: number, host: string, cb: () => void): Server }, port: number, host: string): Promise<Server> {
  return new Promise((resolve, reject) => {
    // a port in use (EADDRINUSE) or not ours to take rejects, so the start fails through its caller,
    // which stops what it started, instead of an 'error' event nothing listens to ending the process
    const refused = (err: Error) => reject(err);
    const server = app.listen(port, host, () => {
      server.off('error', refused);
      resolve(server);
    });
    server.once('error', refused);
    server.keepAliveTimeout = KEEP_ALIVE_TIMEOUT_MS;
    server.headersTimeout = HEADERS_TIMEOUT_MS;
    envelopeClientErrors(server);
    // While draining, every answer closes its connection after it is sent: the client opens no
    // further request on it and learns that this process is going away.
    server.prependListener('request', (_req, res) => {
      if (draining.has(server)) res.setHeader('Connection', 'close');
    });
  });
}

/**
 * Graceful stop: no new connections; every request that arrives on an open connection is still
 * answered, with `Connection: close`; idle connections are closed only after IDLE_GRACE_MS, so a
 * request already on its way is not met by a reset (closing them at once, as http-terminator and
 * stoppable do, reset exactly those); after `timeoutMs` whatever is left is cut. A request that
 * reaches a connection idle for the whole grace at the very moment it closes can still be reset,
 * as with any keep-alive timeout (RFC 9112 9.6 has clients retry then).
 */
export function drainHttp(server: Server, opts: { timeoutMs: number; onForce?: () => void }): Promise<void> {
  draining.add(server);
  return new Promise<void>((resolve) => {
    const idle = setTimeout(() => server.closeIdleConnections(), IDLE_GRACE_MS);
    const force = setTimeout(() => {
      opts.onForce?.();
      server.closeAllConnections();
    }, opts.timeoutMs);
    // http.Server#close closes the idle connections at once (Node 19+), which is the reset this
    // avoids: net.Server#close only stops listening, and calls back once every connection ended.
    net.Server.prototype.close.call(server, () => {
      clearTimeout(idle);
      clearTimeout(force);
      resolve();
    });
  });
}

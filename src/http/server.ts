import { randomUUID } from 'node:crypto';
import type { Server } from 'node:http';
import type { Socket } from 'node:net';

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
  server.on('clientError', (err: NodeJS.ErrnoException, socket: Socket) => {
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

/** Starts the HTTP server of the app with the envelope for parser-level refusals. */
export function listen(app: { listen(port: number, host: string, cb: () => void): Server }, port: number, host: string): Promise<Server> {
  return new Promise((resolve) => {
    const server = app.listen(port, host, () => resolve(server));
    envelopeClientErrors(server);
  });
}

import { Writable } from 'node:stream';
import type Koa from 'koa';
import { koaBody } from 'koa-body';

/**
 * A multipart/form-data parser for one file, kept in memory (never written to disk) until the core
 * stores it: the attachment upload (src/http) and the console's logo form (src/ops) share it. The
 * caller sets the largest file and what a refusal becomes (`onError`: the REST envelope, or a
 * redirect back to the form); `bytesOf(part)` gives the bytes formidable received for a part.
 */
export function memoryMultipart(opts: { maxFileBytes: number; onError?: (err: Error & { code?: unknown }) => never }): {
  parse: Koa.Middleware;
  bytesOf: (part: object) => Buffer | null;
} {
  const received = new WeakMap<object, Buffer[]>();
  const parse = koaBody({
    multipart: true,
    json: false,
    urlencoded: false,
    text: false,
    formidable: {
      maxFiles: 1,
      maxFileSize: opts.maxFileBytes,
      maxTotalFileSize: opts.maxFileBytes,
      maxFields: 20,
      maxFieldsSize: 64 * 1024,
      allowEmptyFiles: true,
      minFileSize: 0,
      fileWriteStreamHandler: (file?: object) => {
        const chunks: Buffer[] = [];
        if (file) received.set(file, chunks);
        return new Writable({
          write(chunk: Buffer, _encoding, done) {
            chunks.push(chunk);
            done();
          },
        });
      },
    },
    ...(opts.onError ? { onError: opts.onError } : {}),
  });
  return {
    parse,
    bytesOf: (part) => {
      const chunks = received.get(part);
      return chunks ? Buffer.concat(chunks) : null;
    },
  };
}

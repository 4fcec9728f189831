import { Writable } from 'node:stream';
import type Koa from 'koa';
import { koaBody } from 'koa-body';
import { withMessage, safeNext } from './route.ts';

/** The largest file a console form takes; the operation applies its own, smaller limit (a logo: 256 KiB) with its own message. */
const MAX_UPLOAD_BYTES = 1024 * 1024;

/**
 * The body parser of a console form with one file input (multipart/form-data): the fields as the
 * urlencoded forms give them, and the file's bytes, base64-encoded, as the text field `field`
 * (what the operation takes, as REST sends it); no file chosen gives ''. The bytes stay in memory,
 * nothing is written to disk. A body the parser refuses (too large, malformed) goes back to the
 * page it came from with the reason.
 */
export function uploadBody(field: string): Koa.Middleware {
  const received = new WeakMap<object, Buffer[]>();
  const parse = koaBody({
    multipart: true,
    urlencoded: false,
    json: false,
    text: false,
    formidable: {
      maxFiles: 1,
      maxFileSize: MAX_UPLOAD_BYTES,
      maxTotalFileSize: MAX_UPLOAD_BYTES,
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
  });
  return async (ctx, next) => {
    try {
      await parse(ctx, async () => {});
    } catch (err) {
      const back = safeNext(ctx.get('referer').replace(/^https?:\/\/[^/]+/, ''), '/ops');
      ctx.status = 303;
      ctx.redirect(withMessage(back, 'err', `The file could not be read (at most ${MAX_UPLOAD_BYTES / 1024 / 1024} MB): ${(err as Error).message}`));
      return;
    }
    const part = [ctx.request.files?.[field] ?? []].flat()[0];
    const chunks = part ? received.get(part) : undefined;
    const body = (ctx.request.body ?? {}) as Record<string, string | string[]>;
    ctx.request.body = { ...body, [field]: chunks ? Buffer.concat(chunks).toString('base64') : '' };
    await next();
  };
}

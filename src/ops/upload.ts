import type Koa from 'koa';
import { memoryMultipart } from '../web/memory-multipart.ts';
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
  const { parse, bytesOf } = memoryMultipart({ maxFileBytes: MAX_UPLOAD_BYTES });
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
    const bytes = part ? bytesOf(part) : null;
    const body = (ctx.request.body ?? {}) as Record<string, string | string[]>;
    ctx.request.body = { ...body, [field]: bytes ? bytes.toString('base64') : '' };
    await next();
  };
}

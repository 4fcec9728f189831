import type { Middleware } from 'koa';
import { z } from 'zod';
import { authorize } from '../../core/access/authorize.ts';
import { downloadAttachment } from '../../core/attachments/download.ts';
import { MAX_ATTACHMENT_BYTES, uploadAttachment, uploadAttachmentFields, type UploadedFile } from '../../core/attachments/upload.ts';
import { deleteComment, editComment, editCommentFields } from '../../core/comments/change.ts';
import { createComment, createCommentFields } from '../../core/comments/create.ts';
import { listComments, listCommentsQuery } from '../../core/comments/list.ts';
import { AppError, invalid } from '../../core/errors.ts';
import { coreCtx, type AppContext, type AppDeps } from '../context.ts';
import { cleanInput } from '../middleware/input.ts';
import { defineRoute, ticketRefParam, idParam, opInput } from '../route-table.ts';
import { fileHeaders } from '../../web/file-headers.ts';
import { memoryMultipart } from '../../web/memory-multipart.ts';

/** Formidable's errors (by its numeric codes), in the envelope: sizes are 413, the rest of the form 400. */
function uploadError(err: Error & { code?: unknown }): AppError {
  switch (err.code) {
    case 1009: // biggerThanTotalMaxFileSize
    case 1016: // biggerThanMaxFileSize
      return new AppError('payload_too_large', 'An attachment is at most 25 MB.', { reason: 'file_too_large', max: MAX_ATTACHMENT_BYTES });
    case 1006: // maxFieldsSizeExceeded
      return new AppError('payload_too_large', 'The form fields are too large.', { reason: 'fields_too_large' });
    case 1015: // maxFilesExceeded
      return invalid('too_many_files', { field: 'file' }, 'Send one file per request.');
    default:
      return invalid('bad_multipart', undefined, `The multipart body could not be read: ${err.message}`);
  }
}

/**
 * Route-level multipart parsing for uploads (the app's global parser accepts JSON only). Runs
 * after authentication, so nobody unauthenticated can stream 25 MB at the server.
 */
const upload = memoryMultipart({
  maxFileBytes: MAX_ATTACHMENT_BYTES,
  onError: (err) => {
    throw uploadError(err);
  },
});
const multipart = upload.parse;

/** Asks the core before any byte of an upload is read: a caller who may not upload streams nothing. */
const mayUpload = (deps: AppDeps) => async (ctx: AppContext, next: () => Promise<unknown>) => {
  authorize(coreCtx(deps, ctx), 'attachments.upload');
  await next();
};

/** Anything but multipart/form-data on the upload route is 415 before any byte is parsed. */
async function requireMultipart(ctx: AppContext, next: () => Promise<unknown>) {
  if (!ctx.is('multipart/form-data')) {
    throw new AppError('unsupported_media_type', 'Send the file as multipart/form-data with a part named "file".', { reason: 'multipart_required' });
  }
  await next();
}

function uploadedFile(ctx: AppContext): UploadedFile | null {
  const part = ctx.request.files?.file;
  if (!part) return null;
  if (Array.isArray(part)) throw invalid('too_many_files', { field: 'file' }, 'Send one file per request.');
  const data = upload.bytesOf(part);
  if (!data) return null;
  return { filename: part.originalFilename, contentType: part.mimetype, data };
}

const byRef = z.object({ ref: ticketRefParam });
const byComment = z.object({ ref: ticketRefParam, id: idParam('commentId') });

/** Routes for comments and attachments (issue 3). */
export const commentsRoutes = [
  defineRoute({ method: 'GET', path: '/tickets/:ref/comments', op: listComments, input: { params: byRef, query: listCommentsQuery } }),
  defineRoute({ method: 'POST', path: '/tickets/:ref/comments', op: createComment, input: { params: byRef, body: createCommentFields }, status: 201 }),
  defineRoute({
    method: 'PATCH',
    path: '/tickets/:ref/comments/:id',
    op: editComment,
    input: { params: byComment, body: editCommentFields },
    sent: ({ ctx, params }) => opInput(ctx.request.body, { ref: params.ref, commentId: params.id }),
  }),
  defineRoute({
    method: 'DELETE',
    path: '/tickets/:ref/comments/:id',
    op: deleteComment,
    input: { params: byComment },
    sent: ({ params }) => ({ ref: params.ref, commentId: params.id }),
  }),
  defineRoute({
    method: 'POST',
    path: '/tickets/:ref/attachments',
    op: uploadAttachment,
    // the body is multipart: the file part plus these fields
    input: { params: byRef, body: uploadAttachmentFields },
    status: 201,
    before: (deps) => [mayUpload(deps), requireMultipart, multipart, cleanInput] as Middleware[],
    sent: ({ ctx, params }) => opInput(ctx.request.body, { ref: params.ref, file: uploadedFile(ctx) }),
  }),
  defineRoute({
    method: 'GET',
    path: '/attachments/:id/download',
    op: downloadAttachment,
    input: { params: z.object({ id: idParam('attachmentId') }) },
    // the stored content type (risky types as application/octet-stream)
    output: { 200: { file: ['*/*'] } },
    sent: ({ params }) => ({ attachmentId: params.id }),
    respond: (ctx, file) => {
      ctx.set(fileHeaders(file));
      ctx.body = file.data;
    },
  }),
];

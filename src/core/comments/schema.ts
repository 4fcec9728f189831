import { z } from 'zod';
import { describing } from '../response-schema.ts';
import { commentSchema } from '../tickets/page-schema.ts';
import type { CommentPage } from './list.ts';

/** Response schema of GET /tickets/{ref}/comments. */
export const commentPageSchema = describing<CommentPage>()(
  z
    .object({
      items: z.array(commentSchema),
      nextCursor: z.string().nullable().describe('The `cursor` of the next page; null on the last page.'),
    })
    .meta({ id: 'CommentPage' }),
);

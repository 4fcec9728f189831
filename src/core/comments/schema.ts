import { z } from 'zod';
import { describing } from '../response-schema.ts';
import { commentSchema } from '../tickets/page-schema.ts';
import type { Comment } from './present.ts';

export interface CommentPage {
  items: Comment[];
  nextCursor: string | null;
}

/** Response schema of GET /tickets/{ref}/comments. */
export const commentPageSchema = describing<CommentPage>()(
  z
    .object({
      items: z.array(commentSchema),
      nextCursor: z.string().nullable().describe('The `cursor` of the next page; null on the last page.'),
    })
    .meta({ id: 'CommentPage' }),
);

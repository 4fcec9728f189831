import { z } from 'zod';
import { defineOp } from '../operation.ts';
import { idField, withReasons } from '../validation.ts';
import { loadProject } from './read.ts';
import { projectSchema, type Project } from './schema.ts';

export const archiveProjectInput = withReasons(
  z.object({
    id: idField('The project.'),
    archived: z.boolean().default(true).describe('true (default) archives the project; false restores it.'),
  }),
  { id: 'bad_uuid' },
);

/**
 * POST /projects/{id}/archive (Owner/Admin): archives (or, with `archived: false`, restores) a
 * project. Its tickets, time, members and keys stay as they are (human ids keep resolving); it
 * leaves the project lists unless they ask for archived projects. Archiving twice keeps the first date.
 */
export const archiveProject = defineOp({
  name: 'projects.archive',
  action: 'projects.archive',
  input: archiveProjectInput,
  output: projectSchema,
  tx: true,
  audit: {
    action: 'projects.archive',
    target: (s) => (typeof s.id === 'string' ? s.id : null),
    detail: (i) => (i.archived ? 'archived' : 'restored'),
  },
  run: async (ctx, input): Promise<Project> => {
    await loadProject(ctx, input.id, { lock: true });
    await ctx.sql`
      update projects set archived_at = ${input.archived ? ctx.sql`coalesce(archived_at, ${ctx.now()})` : null}
      where id = ${input.id}`;
    return loadProject(ctx, input.id);
  },
});

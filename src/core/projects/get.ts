import { z } from 'zod';
import { defineOp } from '../operation.ts';
import { idField, withReasons } from '../validation.ts';
import { loadProject } from './read.ts';
import { projectSchema, type Project } from './schema.ts';

export const projectIdInput = withReasons(z.object({ id: idField('The project.') }), { id: 'bad_uuid' });

/**
 * GET /projects/{id} (workspace users, token read): the project's settings, for a caller who may
 * name it (Owner/Admin any; a member or agent their own projects; a token's allow-list narrows it).
 * Any other is 404 `unknown_project`, as an unknown one.
 */
export const getProject = defineOp({
  name: 'projects.read',
  action: 'projects.read',
  input: projectIdInput,
  output: projectSchema,
  run: async (ctx, { id }): Promise<Project> => loadProject(ctx, id, { addressable: true }),
});

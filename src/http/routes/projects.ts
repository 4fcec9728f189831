import { z } from 'zod';
import { archiveProject, archiveProjectInput } from '../../core/projects/archive.ts';
import { createProject, createProjectInput } from '../../core/projects/create.ts';
import { getProject } from '../../core/projects/get.ts';
import { listProjects, listProjectsInput } from '../../core/projects/list.ts';
import { listProjectMembers, removeProjectMember, setMemberFields, setProjectMember } from '../../core/projects/members.ts';
import { updateProject, updateProjectFields } from '../../core/projects/update.ts';
import { defineRoute, idParam } from '../route-table.ts';

const byId = z.object({ id: idParam() });
const byMember = z.object({ id: idParam(), identityId: idParam('identityId') });

/** Projects and their memberships (issue 22): Owner/Admin writes; the list for everyone, the rest for workspace users, of the projects they may name. */
export const projectsRoutes = [
  defineRoute({ method: 'GET', path: '/projects', op: listProjects, input: { query: listProjectsInput } }),
  defineRoute({ method: 'POST', path: '/projects', op: createProject, input: { body: createProjectInput }, status: 201 }),
  defineRoute({ method: 'GET', path: '/projects/:id', op: getProject, input: { params: byId } }),
  defineRoute({ method: 'PATCH', path: '/projects/:id', op: updateProject, input: { params: byId, body: updateProjectFields } }),
  defineRoute({ method: 'POST', path: '/projects/:id/archive', op: archiveProject, input: { params: byId, body: archiveProjectInput.omit({ id: true }) } }),
  defineRoute({ method: 'GET', path: '/projects/:id/members', op: listProjectMembers, input: { params: byId } }),
  defineRoute({ method: 'PUT', path: '/projects/:id/members/:identityId', op: setProjectMember, input: { params: byMember, body: setMemberFields } }),
  defineRoute({ method: 'DELETE', path: '/projects/:id/members/:identityId', op: removeProjectMember, input: { params: byMember } }),
];

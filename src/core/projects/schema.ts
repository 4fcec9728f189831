import { z } from 'zod';
import { dateTimeOut, describing, uuidOut } from '../response-schema.ts';
import { billingModeField, billingPolicyField } from '../tickets/schemas.ts';

/** A project's input fields (create and PATCH, every door) and the response schemas of the project routes. */

/** Collaborating clients one project may have. */
export const MAX_COLLABORATORS = 20;

export const projectKeyField = z
  .string()
  .trim()
  .toUpperCase()
  .regex(/^[A-Z][A-Z0-9]{1,9}$/)
  .describe(
    'Key, 2-10 letters or digits starting with a letter (upper-cased): the prefix of the human ids (KEY-12). Unique, and never a key another project had.',
  );
export const projectNameField = z.string().trim().min(1).max(200).describe('Project name, 1-200 characters.');
export const billingClientField = z.uuid().toLowerCase().nullable().describe('The client billed for the project’s work by default; null: internal work.');
export const projectPolicyField = billingPolicyField.describe(
  'Default billing of the project’s tickets: "paid", "free" or "bank:<bankId>" (a bank of the billing client); null inherits from the client.',
);
export const projectModeField = billingModeField.describe('Default billing mode of the project’s tickets; null inherits from the client.');
export const collaboratorsField = z
  .array(z.uuid().toLowerCase())
  .max(MAX_COLLABORATORS)
  .describe(
    `Collaborating clients (never the billing client), at most ${MAX_COLLABORATORS}; replaces the set. Their elevated users see the project’s tickets and tickets may be billed to them.`,
  );

export interface Project {
  id: string;
  key: string;
  name: string;
  billingClientId: string | null;
  billingPolicy: string | null;
  billingMode: 'period' | 'on_close' | null;
  collaboratorIds: string[];
  /** Keys the project had before, alphabetically: their human ids still open its tickets. */
  formerKeys: string[];
  archivedAt: string | null;
  createdAt: string;
}

/** A project as the project list names it to the caller. */
export interface ProjectListItem {
  id: string;
  key: string;
  name: string;
  billingClient: { id: string; code: string; name: string } | null;
  /** The caller's own membership of the project; null when not a member. */
  membership: { access: 'full' | 'limited'; isManager: boolean } | null;
  archivedAt: string | null;
}

export interface ProjectMember {
  identityId: string;
  name: string;
  email: string | null;
  role: string;
  access: 'full' | 'limited';
  manager: boolean;
  /** The category this person bills as on this project; null: their membership default. */
  categoryId: string | null;
}

export const projectSchema = describing<Project>()(
  z
    .object({
      id: uuidOut,
      key: z.string(),
      name: z.string(),
      billingClientId: uuidOut.nullable(),
      billingPolicy: z.string().nullable().describe('The project’s own policy; null inherits from the client.'),
      billingMode: z.enum(['period', 'on_close']).nullable(),
      collaboratorIds: z.array(uuidOut),
      formerKeys: z.array(z.string()).describe('Keys the project had before: their human ids still open its tickets.'),
      archivedAt: dateTimeOut.nullable().describe('When the project was archived; null: active.'),
      createdAt: dateTimeOut,
    })
    .meta({ id: 'Project' }),
);

export const projectMemberSchema = describing<ProjectMember>()(
  z
    .object({
      identityId: uuidOut,
      name: z.string(),
      email: z.string().nullable(),
      role: z.string().describe('The workspace role: owner, admin, member or agent.'),
      access: z.enum(['full', 'limited']).describe('full: create, edit, move and archive tickets; limited: read, comment and log time.'),
      manager: z.boolean(),
      categoryId: uuidOut.nullable().describe('The category this person bills as here; null: their membership default.'),
    })
    .meta({ id: 'ProjectMember' }),
);

export const projectMemberListSchema = describing<{ members: ProjectMember[] }>()(
  z.object({ members: z.array(projectMemberSchema) }).meta({ id: 'ProjectMemberList' }),
);

export const projectListSchema = describing<{ projects: ProjectListItem[] }>()(
  z
    .object({
      projects: z.array(
        z
          .object({
            id: uuidOut,
            key: z.string(),
            name: z.string(),
            billingClient: z.object({ id: uuidOut, code: z.string(), name: z.string() }).nullable().describe('Null: internal work.'),
            membership: z
              .object({ access: z.enum(['full', 'limited']), isManager: z.boolean() })
              .nullable()
              .describe('The caller’s own membership; null: not a member.'),
            archivedAt: dateTimeOut.nullable(),
          })
          .meta({ id: 'ProjectListItem' }),
      ),
    })
    .meta({ id: 'ProjectList' }),
);

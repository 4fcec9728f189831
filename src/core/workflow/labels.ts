import { z } from 'zod';
import type { Ctx } from '../ctx.ts';
import { conflict, notFound } from '../errors.ts';
import { defineOp } from '../operation.ts';
import { withReasons } from '../validation.ts';
import { colorField, itemId, labelSchema, moveToField, workflowItemDeletedSchema, type Label, type WorkflowItemDeleted } from './admin-schema.ts';
import { assertOtherTarget, changeWorkflow, inUse, movedEvents, unknownTarget } from './vocabulary.ts';

/**
 * Labels (issue 22), Owner/Admin: create, rename, recolour, delete with a target. Labels have no
 * position: GET /workflow lists them by name. A ticket holds any number of them, so deleting one
 * with `moveTo` gives its tickets the target label (once) in its place.
 */

/** The database's rule (1-60 characters, unique in any case in the workspace). */
const labelName = z.string().trim().min(1).max(60).describe('Name, 1-60 characters, unique in the workspace in any case');

export const createLabelFields = z.object({ name: labelName, color: colorField.optional() });
export const updateLabelFields = z.object({ name: labelName.optional(), color: colorField.optional() });

const updateLabelInput = withReasons(updateLabelFields.extend({ id: itemId('label') }), { id: 'bad_uuid' });
const deleteLabelInput = withReasons(z.object({ id: itemId('label'), moveTo: moveToField }), { id: 'bad_uuid', moveTo: 'bad_uuid' });

const idOf = (s: { id?: unknown }) => (typeof s.id === 'string' ? s.id : null);

async function findLabel(ctx: Ctx, id: string, opts: { lock?: boolean } = {}): Promise<Label | undefined> {
  const { sql } = ctx;
  const [row] = await sql<Label[]>`
    select id, name, color from labels where id = ${id} and workspace_id = ${ctx.principal.workspaceId} ${opts.lock ? sql`for update` : sql``}`;
  return row;
}

async function labelOf(ctx: Ctx, id: string, opts: { lock?: boolean } = {}): Promise<Label> {
  const row = await findLabel(ctx, id, opts);
  if (!row) throw notFound('unknown_label', { field: 'id' }, 'No such label in this workspace.');
  return row;
}

/** 409 `name_taken` when another label has the name in any case. */
async function assertNameFree(ctx: Ctx, name: string, exceptId: string | null): Promise<void> {
  const [taken] = await ctx.sql`
    select 1 from labels where workspace_id = ${ctx.principal.workspaceId} and lower(name) = lower(${name}) and id is distinct from ${exceptId}::uuid`;
  if (taken) throw conflict('name_taken', { field: 'name', name }, `Another label is called "${name}".`);
}

/** POST /workflow/labels: a new label. */
export const createLabel = defineOp({
  name: 'workflow.labels.create',
  action: 'workflow.labels.create',
  input: createLabelFields,
  output: labelSchema,
  audit: { action: 'workflow.labels.create', target: (s) => (typeof s.name === 'string' ? s.name : null) },
  run: (ctx, input): Promise<Label> =>
    changeWorkflow(ctx, 'labels', async (ctx) => {
      await assertNameFree(ctx, input.name, null);
      const [row] = await ctx.sql<Label[]>`
        insert into labels (workspace_id, name, color, created_at) values (${ctx.principal.workspaceId}, ${input.name}, ${input.color ?? null}, ${ctx.now()})
        returning id, name, color`;
      return row!;
    }),
});

/** PUT /workflow/labels/{id}: renames or recolours it (what is sent). */
export const updateLabel = defineOp({
  name: 'workflow.labels.update',
  action: 'workflow.labels.update',
  input: updateLabelInput,
  output: labelSchema,
  audit: { action: 'workflow.labels.update', target: idOf },
  run: (ctx, { id, name, color }): Promise<Label> =>
    changeWorkflow(ctx, 'labels', async (ctx) => {
      const before = await labelOf(ctx, id);
      if (name !== undefined && name.toLowerCase() !== before.name.toLowerCase()) await assertNameFree(ctx, name, id);
      const [row] = await ctx.sql<Label[]>`
        update labels set name = ${name ?? before.name}, color = ${color === undefined ? before.color : color} where id = ${id}
        returning id, name, color`;
      return row!;
    }),
});

/**
 * DELETE /workflow/labels/{id}?moveTo=: while tickets carry it, 409 `in_use` unless `moveTo` names
 * another label; then each of them gets the target (unless it has it already) in place of the
 * deleted one, with a `field_changed` event on `labelIds` as a PATCH writes it.
 */
export const deleteLabel = defineOp({
  name: 'workflow.labels.delete',
  action: 'workflow.labels.delete',
  input: deleteLabelInput,
  output: workflowItemDeletedSchema,
  audit: {
    action: 'workflow.labels.delete',
    target: idOf,
    detail: (i, r: WorkflowItemDeleted) => `${r.moved} ticket(s) moved${i.moveTo ? ` to ${i.moveTo}` : ''}`,
  },
  run: (ctx, { id, moveTo }): Promise<WorkflowItemDeleted> =>
    changeWorkflow(ctx, 'labels', async (ctx) => {
      const { sql } = ctx;
      // locked first: from here no ticket can be given it (their key-share lock waits)
      await labelOf(ctx, id, { lock: true });
      if (moveTo !== undefined) {
        assertOtherTarget(id, moveTo);
        if (!(await findLabel(ctx, moveTo))) throw unknownTarget('label');
      }
      // every label of each ticket that carries it, as PATCH's event names them (sorted ids)
      const carriers = await sql<{ ticketId: string; labelIds: string[] }[]>`
        select tl.ticket_id as "ticketId", array_agg(tl.label_id::text order by tl.label_id::text) as "labelIds"
        from ticket_labels tl
        where tl.ticket_id in (select c.ticket_id from ticket_labels c where c.label_id = ${id})
        group by tl.ticket_id
        order by tl.ticket_id`;
      if (carriers.length > 0) {
        if (moveTo === undefined) throw inUse('label', carriers.length);
        await sql`insert into ticket_labels (ticket_id, label_id) select c.ticket_id, ${moveTo}::uuid from ticket_labels c where c.label_id = ${id} on conflict do nothing`;
        await movedEvents(
          ctx,
          'labelIds',
          carriers.map((c) => ({
            ticketId: c.ticketId,
            old: [...c.labelIds].sort(),
            new: [...new Set([...c.labelIds.filter((l) => l !== id), moveTo])].sort(),
          })),
        );
      }
      // the ticket_labels rows go with it (on delete cascade)
      await sql`delete from labels where id = ${id}`;
      return { ok: true, moved: carriers.length };
    }),
});

import type { Ctx } from '../ctx.ts';
import { runOp } from '../operation.ts';
import { getWorkflow, type Workflow } from '../workflow/get.ts';
import { fold, isUuid, unknownName } from './common.ts';

type Keyed = { id: string; key: string; name: string };
type Vocabulary = 'states' | 'kinds' | 'priorities';

const REASONS: Record<Vocabulary | 'labels', string> = {
  states: 'unknown_state',
  kinds: 'unknown_kind',
  priorities: 'unknown_priority',
  labels: 'unknown_label',
};

function match(items: readonly Keyed[], value: string): Keyed | undefined {
  const v = fold(value);
  return items.find((i) => i.key === v) ?? items.find((i) => fold(i.name) === v);
}

/**
 * A workflow state, kind or priority given by id, key or name (case-insensitive) -> its id.
 * Ids pass through (the operation checks them); an unknown key or name is 400 with the choices.
 * Reads the workflow through the process cache, so it usually costs no query.
 */
export async function resolveWorkflowId(ctx: Ctx, vocabulary: Vocabulary, value: string, field: string): Promise<string> {
  if (isUuid(value)) return value.toLowerCase();
  const items: Keyed[] = (await runOp(getWorkflow, ctx, {}))[vocabulary];
  const hit = match(items, value);
  if (!hit)
    throw unknownName(
      REASONS[vocabulary],
      field,
      value,
      items.map(({ id, key, name }) => ({ id, key, name })),
    );
  return hit.id;
}

/** Several values of one vocabulary (filters), in order. */
export async function resolveWorkflowIds(ctx: Ctx, vocabulary: Vocabulary, values: readonly string[], field: string): Promise<string[]> {
  return Promise.all(values.map((v, i) => resolveWorkflowId(ctx, vocabulary, v, `${field}.${i}`)));
}

/** Labels by id or name (case-insensitive) -> ids. */
export async function resolveLabelIds(ctx: Ctx, values: readonly string[], field: string): Promise<string[]> {
  if (values.every(isUuid)) return values.map((v) => v.toLowerCase());
  const labels: Workflow['labels'] = (await runOp(getWorkflow, ctx, {})).labels;
  return values.map((value, i) => {
    if (isUuid(value)) return value.toLowerCase();
    const hit = labels.find((l) => fold(l.name) === fold(value));
    if (!hit)
      throw unknownName(
        REASONS.labels,
        `${field}.${i}`,
        value,
        labels.map(({ id, name }) => ({ id, name })),
      );
    return hit.id;
  });
}

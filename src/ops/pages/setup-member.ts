import { getMember } from '../../core/people/get-member.ts';
import { updateMember } from '../../core/people/update-member.ts';
import { listCategories } from '../../core/time/categories.ts';
import { runOp } from '../../core/operation.ts';
import { defineAction, withMessage, type OpsRequest, type OpsRoute } from '../route.ts';
import { html } from '../html.ts';
import { formHead, hoursAsMinutes, idOrNull, minutesAsHours, options, setupPage } from './setup-common.ts';

/** One member's page: their time settings (time zone, weekly target, default category), PATCH /members/{identityId}'s operation. */
async function memberPage(r: OpsRequest) {
  const [m, { categories }] = await Promise.all([runOp(getMember, r.ctx, { identityId: r.params.identityId ?? '' }), runOp(listCategories, r.ctx, {})]);
  const back = `/ops/setup/people/${m.identityId}`;
  const categoryChoices = [['', 'none'] as const, ...categories.map((c) => [c.id, c.name] as const)];
  return setupPage(
    r,
    'people',
    `Member: ${m.name}`,
    html`<p><a href="/ops/setup/people">All people</a></p>
      <p>${m.email ?? ''} · ${m.role}${m.deactivatedAt ? ' · deactivated' : ''}</p>
      <h2>Time settings</h2>
      <p>The time zone is the wall clock of their entries and the meaning of “today”; the category is the one they bill as unless a project says otherwise.</p>
      <form method="post" action="/ops/setup/people/${m.identityId}/settings" class="stack">
        ${formHead(r, back)}
        <label for="member-timezone"
          >Time zone (IANA, e.g. Europe/Berlin) <input id="member-timezone" name="timezone" value="${m.timezone}" required maxlength="64" autocomplete="off"
        /></label>
        <label for="member-target"
          >Weekly target in hours (empty: none)
          <input id="member-target" name="weeklyTargetHours" type="number" min="0" max="168" step="any" value="${minutesAsHours(m.weeklyTargetMinutes)}"
        /></label>
        <label for="member-category"
          >Default category
          <select id="member-category" name="categoryId">
            ${options(categoryChoices, m.categoryId)}
          </select></label
        >
        <button type="submit">Save time settings</button>
      </form>`,
  );
}

export const setupMemberPages: OpsRoute[] = [
  { method: 'GET', path: '/setup/people/:identityId', page: memberPage },
  defineAction({
    method: 'POST',
    path: '/setup/people/:identityId/settings',
    op: updateMember,
    sent: (r) => ({
      identityId: r.params.identityId ?? '',
      timezone: r.body.timezone ?? '',
      weeklyTargetMinutes: hoursAsMinutes(r.body.weeklyTargetHours),
      categoryId: idOrNull(r.body.categoryId),
    }),
    answer: (m) => ({ redirect: withMessage(`/ops/setup/people/${m.identityId}`, 'msg', `The time settings of ${m.name} are saved.`) }),
  }),
];

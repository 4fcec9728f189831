import { getSettings, updateSettings } from '../../core/workspaces/settings.ts';
import { runOp } from '../../core/operation.ts';
import { defineAction, withMessage, type OpsRequest, type OpsRoute } from '../route.ts';
import { html } from '../html.ts';
import { formHead, given, hoursAsMinutes, minutesAsHours, setupPage } from './setup-common.ts';

const BACK = '/ops/setup/settings';

/** The workspace's own settings (GET/PATCH /settings): its name, a new member's defaults, its emails' sender. */
async function settingsPage(r: OpsRequest) {
  const s = await runOp(getSettings, r.ctx, {});
  return setupPage(
    r,
    'settings',
    'Settings',
    html`<p>
        The workspace <strong>${s.slug}</strong>. A new member starts with its time zone and weekly target; each member’s own are on their page under
        <a href="/ops/setup/people">People</a>.
      </p>
      <form method="post" action="/ops/setup/settings" class="stack">
        ${formHead(r, BACK)}
        <label for="settings-name">Name <input id="settings-name" name="name" value="${s.name}" required maxlength="100" autocomplete="off" /></label>
        <label for="settings-timezone"
          >Default time zone (IANA, e.g. Europe/Berlin)
          <input id="settings-timezone" name="defaultTimezone" value="${s.defaultTimezone}" required maxlength="64" autocomplete="off"
        /></label>
        <label for="settings-target"
          >Default weekly target in hours (empty: none)
          <input
            id="settings-target"
            name="defaultWeeklyTargetHours"
            type="number"
            min="0"
            max="168"
            step="any"
            value="${minutesAsHours(s.defaultWeeklyTargetMinutes)}"
        /></label>
        <label for="settings-from"
          >Sender name of emails (empty: the server’s)
          <input id="settings-from" name="mailFromName" value="${s.mailFromName ?? ''}" maxlength="100" autocomplete="off"
        /></label>
        <label for="settings-reply"
          >Reply-To of invitations and password resets (empty: none)
          <input id="settings-reply" name="mailReplyTo" type="email" value="${s.mailReplyTo ?? ''}" maxlength="254" autocomplete="off"
        /></label>
        <button type="submit">Save settings</button>
      </form>`,
  );
}

export const setupSettingsPages: OpsRoute[] = [
  { method: 'GET', path: '/setup/settings', page: settingsPage },
  defineAction({
    method: 'POST',
    path: '/setup/settings',
    op: updateSettings,
    // the form shows every field, so every field is sent: an emptied optional one is cleared
    sent: (r) => ({
      name: r.body.name ?? '',
      defaultTimezone: r.body.defaultTimezone ?? '',
      defaultWeeklyTargetMinutes: hoursAsMinutes(r.body.defaultWeeklyTargetHours),
      mailFromName: given(r.body.mailFromName) ?? null,
      mailReplyTo: given(r.body.mailReplyTo) ?? null,
    }),
    answer: () => ({ redirect: withMessage(BACK, 'msg', 'The settings are saved.') }),
  }),
];

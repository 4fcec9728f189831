import { getSettings, updateSettings, type WorkspaceSettings } from '../../core/workspaces/settings.ts';
import { runOp } from '../../core/operation.ts';
import { defineAction, withMessage, type OpsRequest, type OpsRoute } from '../route.ts';
import { html } from '../html.ts';
import { formHead, given, hoursAsMinutes, minutesAsHours, rowButton, setupPage } from './setup-common.ts';

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
      </form>
      ${documentsForm(r, s)}`,
  );
}

/**
 * What the agency's timesheets print (issue 23): fixed on each timesheet when its run is allocated,
 * so a change here alters the next run's documents, never an issued one.
 */
function documentsForm(r: OpsRequest, s: WorkspaceSettings) {
  const logo = s.logo ? `${s.logo.contentType === 'image/png' ? 'PNG' : 'JPEG'}, ${Math.ceil(s.logo.bytes / 1024)} KB` : 'none';
  return html`<h2>On timesheets</h2>
    <p>What the agency’s timesheets print. Each run fixes them on its documents: a change applies from the next run on.</p>
    <form method="post" action="/ops/setup/settings/documents" class="stack">
      ${formHead(r, BACK)}
      <label for="settings-legal"
        >Legal name (empty: the workspace name) <input id="settings-legal" name="legalName" value="${s.legalName ?? ''}" maxlength="200" autocomplete="off"
      /></label>
      <label for="settings-address">Address <textarea id="settings-address" name="address" rows="4" maxlength="500">${s.address ?? ''}</textarea></label>
      <label for="settings-taxid"
        >Tax ID (e.g. VAT number) <input id="settings-taxid" name="taxId" value="${s.taxId ?? ''}" maxlength="50" autocomplete="off"
      /></label>
      <label for="settings-holder"
        >Account holder <input id="settings-holder" name="bankAccountHolder" value="${s.bankAccountHolder ?? ''}" maxlength="200" autocomplete="off"
      /></label>
      <label for="settings-iban">IBAN <input id="settings-iban" name="bankIban" value="${s.bankIban ?? ''}" maxlength="50" autocomplete="off" /></label>
      <label for="settings-bic">BIC <input id="settings-bic" name="bankBic" value="${s.bankBic ?? ''}" maxlength="20" autocomplete="off" /></label>
      <label for="settings-bank"
        >Other payment details (free text) <textarea id="settings-bank" name="bankDetails" rows="3" maxlength="500">${s.bankDetails ?? ''}</textarea>
      </label>
      <button type="submit">Save what timesheets print</button>
    </form>
    <p>Logo: ${logo}. Documents embed it; a new one applies from the next run on.</p>
    <form method="post" action="/ops/setup/settings/logo/upload" enctype="multipart/form-data" class="stack">
      ${formHead(r, BACK)}
      <label for="settings-logo"
        >Logo file (PNG or JPEG, at most 256 KB) <input id="settings-logo" name="logo" type="file" accept="image/png,image/jpeg" required
      /></label>
      <button type="submit">Upload the logo</button>
    </form>
    ${s.logo ? rowButton(r, '/ops/setup/settings/logo', BACK, 'Remove the logo', {}) : ''}`;
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
  defineAction({
    method: 'POST',
    path: '/setup/settings/documents',
    op: updateSettings,
    // every field is on the form: an emptied one is cleared
    sent: (r) => ({
      legalName: given(r.body.legalName) ?? null,
      address: given(r.body.address) ?? null,
      taxId: given(r.body.taxId) ?? null,
      bankAccountHolder: given(r.body.bankAccountHolder) ?? null,
      bankIban: given(r.body.bankIban) ?? null,
      bankBic: given(r.body.bankBic) ?? null,
      bankDetails: given(r.body.bankDetails) ?? null,
    }),
    answer: () => ({ redirect: withMessage(BACK, 'msg', 'What timesheets print is saved; it applies from the next billing run.') }),
  }),
  defineAction({
    method: 'POST',
    path: '/setup/settings/logo/upload',
    op: updateSettings,
    upload: { field: 'logo' },
    // no file chosen is '': the operation refuses it (bad_logo) rather than clearing the logo
    sent: (r) => ({ logo: r.body.logo ?? '' }),
    answer: () => ({ redirect: withMessage(BACK, 'msg', 'The logo is saved; it applies from the next billing run.') }),
  }),
  defineAction({
    method: 'POST',
    path: '/setup/settings/logo',
    op: updateSettings,
    sent: () => ({ logo: null }),
    answer: () => ({ redirect: withMessage(BACK, 'msg', 'The logo is removed; documents already made keep theirs.') }),
  }),
];

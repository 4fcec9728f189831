import type { InvitationPreview } from '../../core/auth/invitation-accept.ts';
import { html } from '../html.ts';
import { layout } from '../layout.ts';

/**
 * The pages the links of emails open (issue 22): accepting an invitation and choosing a new
 * password. Signed out, like the sign-in page; the link's secret is the credential, and the core
 * decides (src/core/auth/invitation-accept.ts, password-reset.ts).
 */

export function joinPage(token: string, inv: InvitationPreview, error: string | null): string {
  const asWhat = inv.clientName ? html`${inv.role} of ${inv.clientName}` : html`${inv.role}`;
  return layout(
    { title: `Join ${inv.workspace.name}`, error },
    html`<p>${inv.name} (${inv.email}), you are invited to ${inv.workspace.name} as ${asWhat}.</p>
      <form method="post" action="/ops/join/${token}" class="stack">
        <label for="password"
          >${inv.hasLogin ? 'Your current password' : 'Choose a password (at least 10 characters)'}
          <input id="password" name="password" type="password" autocomplete="${inv.hasLogin ? 'current-password' : 'new-password'}" required
        /></label>
        <button type="submit">Join ${inv.workspace.name}</button>
      </form>`,
  );
}

export function resetPage(token: string, error: string | null): string {
  return layout(
    { title: 'Choose a new password', error },
    html`<form method="post" action="/ops/reset/${token}" class="stack">
      <label for="password"
        >New password (at least 10 characters) <input id="password" name="password" type="password" autocomplete="new-password" required
      /></label>
      <button type="submit">Set the password</button>
    </form>`,
  );
}

/** A link used, revoked, expired or never made: the same page for each (no oracle). */
export function linkGonePage(what: 'invitation' | 'reset'): string {
  const ask = what === 'invitation' ? 'Ask whoever invited you to send it again.' : html`<a href="/ops/login">Sign in</a> or ask for a new reset link.`;
  return layout({ title: 'This link does not work' }, html`<p>This link is unknown, used, revoked or expired. ${ask}</p>`);
}

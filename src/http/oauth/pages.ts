import { createHash } from 'node:crypto';
import { Html, html } from '../../core/html.ts';
import type { GrantView } from '../../core/oauth/grants.ts';
import type { OAuthScope } from '../../core/oauth/scopes.ts';

/**
 * The authorization server's pages: sign in, consent, the person's grants. Server-rendered
 * through the one HTML escaping (src/core/html.ts), no script, the console's stylesheet, and a
 * CSP that allows nothing else (server.ts). Everything a client says about itself is shown as
 * text and next to what the server checked: the host of its client_id URL and of the redirect.
 */

/** The pages' own few rules over the console's stylesheet: checkboxes beside their text. Allowed by its hash. */
const STYLE =
  'fieldset{max-width:40rem}fieldset label{display:flex;gap:.5rem;align-items:baseline;font-weight:400}form.stack{max-width:40rem}' +
  'ul.grants{list-style:none;padding:0;max-width:40rem}li.grant{border-bottom:1px solid #ccc;padding:.5rem 0 1rem}' +
  'li.grant h2{font-size:1.1rem;margin:.25rem 0}li.grant dl{display:grid;grid-template-columns:max-content 1fr;gap:.15rem .75rem;margin:.5rem 0}' +
  'li.grant dt{font-weight:600}li.grant dd{margin:0;overflow-wrap:anywhere}';
const STYLE_HASH = `'sha256-${createHash('sha256').update(STYLE).digest('base64')}'`;
const STYLE_TAG = new Html(`<style>${STYLE}</style>`);

/**
 * The pages' CSP: no script, nothing from elsewhere. A form may post here only, except that the
 * consent form's answer is a redirect to the client, which browsers check against form-action
 * too: `formTarget` (the redirect URI the authorization server already matched) is added then.
 */
export function pageCsp(formTarget?: string): string {
  let target = '';
  if (formTarget) {
    const u = new URL(formTarget);
    target = u.protocol === 'http:' || u.protocol === 'https:' ? ` ${u.origin}` : ` ${u.protocol}`;
  }
  return `default-src 'none'; style-src 'self' ${STYLE_HASH}; img-src 'self'; form-action 'self'${target}; frame-ancestors 'none'; base-uri 'none'`;
}

const SCOPE_TEXT: Record<OAuthScope, string> = {
  read: 'read: see the tickets, comments, time and documents you can see',
  write: 'write: create and change tickets, comments and time entries as you',
  triage: 'triage: see and route tickets in the Inbox',
};

function page(title: string, body: Html, error?: string | null): string {
  return html`<!doctype html>
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <title>${title} · Work tracker</title>
        <link rel="stylesheet" href="/ops/static/ops.css" />
        ${STYLE_TAG}
      </head>
      <body>
        <header><p class="brand">Work tracker</p></header>
        <main id="main">
          <h1>${title}</h1>
          ${error ? html`<p class="error" role="alert">${error}</p>` : ''} ${body}
        </main>
      </body>
    </html>`.text;
}

export function messagePage(title: string, message: string): string {
  return page(title, html`<p>${message}</p>`);
}

/** The sign-in form: the API's login, then back to `next` (a consent or the grants page). */
export function signInPage(next: string, error: string | null): string {
  return page(
    'Sign in to continue',
    html`<p>An application asks to connect to your work tracker account. Sign in first.</p>
      <form method="post" action="/oauth/login" class="stack">
        <input type="hidden" name="next" value="${next}" />
        <label for="email">Email <input id="email" name="email" type="email" autocomplete="username" required /></label>
        <label for="password">Password <input id="password" name="password" type="password" autocomplete="current-password" required /></label>
        <button type="submit">Sign in</button>
      </form>`,
    error,
  );
}

export interface ConsentView {
  action: string;
  csrf: string;
  personName: string;
  clientName: string;
  /** The host of the client_id URL (a metadata document) or null for a registered client. */
  clientHost: string | null;
  clientId: string;
  redirectHost: string;
  requested: OAuthScope[];
  workspaces: { slug: string; name: string; role: string; allowed: OAuthScope[]; projects: { id: string; key: string; name: string }[] }[];
  error?: string | null;
}

export function consentPage(v: ConsentView): string {
  const client = v.clientHost
    ? html`<strong>${v.clientName}</strong>, published at <strong>${v.clientHost}</strong>`
    : html`<strong>${v.clientName}</strong> (registered client <code>${v.clientId}</code>)`;
  const one = v.workspaces.length === 1;
  return page(
    'Allow access?',
    html`<p>${client} asks to act as <strong>${v.personName}</strong> through the MCP server.</p>
      <p>After you decide, you go back to <strong>${v.redirectHost}</strong>. Only continue if you started this from that application.</p>
      <form method="post" action="${v.action}" class="stack">
        <input type="hidden" name="_csrf" value="${v.csrf}" />
        <fieldset>
          <legend>Workspace</legend>
          ${v.workspaces.map(
            (w, i) =>
              html`<label
                ><input type="radio" name="workspace" value="${w.slug}" ${one || i === 0 ? html`checked` : ''} /> ${w.name} (${w.role}; may allow
                ${w.allowed.join(', ')})</label
              >`,
          )}
        </fieldset>
        <fieldset>
          <legend>What it may do</legend>
          ${v.requested.map((s) => html`<label><input type="checkbox" name="scope" value="${s}" checked /> ${SCOPE_TEXT[s]}</label>`)}
        </fieldset>
        <fieldset>
          <legend>Projects (none ticked: every project you can see)</legend>
          ${v.workspaces.flatMap((w) =>
            w.projects.map(
              (p) => html`<label><input type="checkbox" name="project" value="${p.id}" /> ${one ? '' : `${w.slug} / `}${p.key}: ${p.name}</label>`,
            ),
          )}
        </fieldset>
        <p>
          <button type="submit" name="decision" value="allow">Allow</button>
          <button type="submit" name="decision" value="deny">Deny</button>
        </p>
      </form>
      <p><a href="/oauth/grants">Applications you have allowed</a></p>`,
    v.error,
  );
}

const when = (d: Date | null) => (d ? d.toISOString().slice(0, 16).replace('T', ' ') + ' UTC' : 'never');

export function grantsPage(grants: GrantView[], csrf: string, notice: string | null): string {
  const items = grants.map(
    (g) =>
      html`<li class="grant">
        <h2>${g.clientName}</h2>
        <dl>
          <dt>Client</dt>
          <dd>${g.clientId}</dd>
          <dt>Workspace</dt>
          <dd>${g.workspace}</dd>
          <dt>Scopes</dt>
          <dd>${g.scopes.join(', ')}</dd>
          <dt>Projects</dt>
          <dd>${g.projects ? g.projects.join(', ') : 'all you can see'}</dd>
          <dt>Allowed</dt>
          <dd>${when(g.createdAt)}</dd>
          <dt>Last used</dt>
          <dd>${when(g.lastUsedAt)}</dd>
          <dt>Access</dt>
          <dd>${g.revokedAt ? `revoked ${when(g.revokedAt)}` : 'active'}</dd>
        </dl>
        ${
          g.revokedAt
            ? ''
            : html`<form method="post" action="/oauth/grants/${encodeURIComponent(g.grantId)}/revoke">
                <input type="hidden" name="_csrf" value="${csrf}" />
                <button type="submit" class="danger">Revoke ${g.clientName}</button>
              </form>`
        }
      </li>`,
  );
  return page(
    'Applications you have allowed',
    html`${notice ? html`<p class="notice" role="status">${notice}</p>` : ''}
    ${
      grants.length
        ? html`<ul class="grants">
            ${items}
          </ul>`
        : html`<p>You have not allowed any application yet.</p>`
    }`,
  );
}

import { html } from '../html.ts';
import { layout } from '../layout.ts';

/** The sign-in form: the API's session login, then back where the operator was going. */
export function loginPage(next: string, error: string | null): string {
  return layout(
    { title: 'Sign in', error },
    html`<form method="post" action="/ops/login" class="stack">
      <input type="hidden" name="next" value="${next}" />
      <label for="email">Email <input id="email" name="email" type="email" autocomplete="username" required /></label>
      <label for="password">Password <input id="password" name="password" type="password" autocomplete="current-password" required /></label>
      <button type="submit">Sign in</button>
    </form>`,
  );
}

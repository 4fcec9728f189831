import { listOperators, setBillingOperator } from '../../core/ops/operators.ts';
import { runOp } from '../../core/operation.ts';
import { defineAction, withMessage, type OpsRequest, type OpsRoute } from '../route.ts';
import { html, token } from '../html.ts';
import { actionForm, layout, table } from '../layout.ts';

/** Who uses the console: owners and admins act; a member an admin made a billing operator reads it. */
async function operatorsPage(r: OpsRequest) {
  const people = await runOp(listOperators, r.ctx, {});
  const rows = people.map((m) => {
    const admin = m.role === 'owner' || m.role === 'admin';
    const access = admin ? 'acts (owner or admin)' : m.billingOperator ? 'reads (billing operator)' : 'none';
    const toggle =
      r.canAct && !admin
        ? actionForm('/ops/operators', r.csrf, m.billingOperator ? `Withdraw billing operator from ${m.name}` : `Make ${m.name} a billing operator`, {
            identityId: m.identityId,
            billingOperator: String(!m.billingOperator),
          })
        : '';
    return html`<tr data-identity="${m.identityId}">
      <td>${m.name}</td>
      <td>${token(m.email)}</td>
      <td>${m.role}</td>
      <td data-access>${access}</td>
      <td>${toggle}</td>
    </tr>`;
  });
  return {
    page: layout(
      { title: 'Operators', principal: r.principal, csrf: r.csrf, section: 'operators', notice: r.query.msg, error: r.query.err },
      html`<p>Owners and admins act in the console. A member made a billing operator sees every page, read-only. Client users never do.</p>
        ${table('Workspace users and their console access', ['Name', 'Email', 'Role', 'Console', ''], rows, 'No workspace users.')}`,
    ),
  };
}

export const operatorPages: OpsRoute[] = [
  { method: 'GET', path: '/operators', page: operatorsPage },
  defineAction({
    method: 'POST',
    path: '/operators',
    op: setBillingOperator,
    sent: (r) => ({ identityId: r.body.identityId ?? '', billingOperator: r.body.billingOperator === 'true' }),
    answer: (m) => ({
      redirect: withMessage(
        '/ops/operators',
        'msg',
        m.billingOperator ? `${m.name} is now a billing operator (read-only).` : `${m.name} is no longer a billing operator.`,
      ),
    }),
  }),
];

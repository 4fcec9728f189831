import { closePeriod, listPeriods, openPeriod, reopenPeriod } from '../../core/periods/manage.ts';
import { runOp } from '../../core/operation.ts';
import { defineAction, withMessage, type OpsRequest, type OpsRoute } from '../route.ts';
import { html } from '../html.ts';
import { formHead, given, rowButton, setupPage, stackedTable } from './setup-common.ts';

const BACK = '/ops/setup/periods';

/**
 * Billing periods: open the next month, close a period once its time is in (closing freezes the
 * entries' work facts and makes the period billable under Billing), reopen one nothing was billed
 * from. Each button is the operation REST's /periods routes run.
 */
async function periodsPage(r: OpsRequest) {
  const { periods } = await runOp(listPeriods, r.ctx, {});
  const rows = [...periods]
    .reverse()
    .map((p) => [
      html`${p.periodStart} – ${p.periodEnd}`,
      html`${p.closedAt ? `closed ${p.closedAt.slice(0, 10)}` : 'open'}`,
      p.closedAt
        ? rowButton(r, '/ops/setup/periods/reopen', BACK, `Reopen ${p.periodStart}`, { id: p.id })
        : rowButton(r, '/ops/setup/periods/close', BACK, `Close ${p.periodStart}`, { id: p.id }),
    ]);
  const first = periods.length === 0;
  return setupPage(
    r,
    'periods',
    'Periods',
    html`<p>
        Time is billed by period (a calendar month). Close a period once its time is in: its entries’ work facts freeze, and the period can be billed under
        <a href="/ops/billing">Billing</a>. A period can be reopened until a billing run has billed from it.
      </p>
      <h2>${first ? 'First period' : 'Next period'}</h2>
      <form method="post" action="/ops/setup/periods" class="stack">
        ${formHead(r, BACK)}
        ${
          first
            ? html`<label for="period-start">First day <input id="period-start" name="periodStart" type="date" /></label>`
            : html`<p>The next period starts the day after ${periods[periods.length - 1]!.periodEnd}.</p>`
        }
        <button type="submit">Open ${first ? 'the first' : 'the next'} period</button>
      </form>
      <h2>Periods</h2>
      ${stackedTable('Billing periods, newest first', ['Period', 'State', 'Action'], rows, 'No period yet.')}`,
  );
}

export const setupPeriodPages: OpsRoute[] = [
  { method: 'GET', path: '/setup/periods', page: periodsPage },
  defineAction({
    method: 'POST',
    path: '/setup/periods',
    op: openPeriod,
    sent: (r) => ({ periodStart: given(r.body.periodStart) }),
    answer: (p) => ({ redirect: withMessage(BACK, 'msg', `Period ${p.periodStart} – ${p.periodEnd} is open.`) }),
  }),
  defineAction({
    method: 'POST',
    path: '/setup/periods/close',
    op: closePeriod,
    sent: (r) => ({ id: r.body.id ?? '' }),
    answer: (p) => ({ redirect: withMessage(BACK, 'msg', `Period ${p.periodStart} – ${p.periodEnd} is closed and can be billed.`) }),
  }),
  defineAction({
    method: 'POST',
    path: '/setup/periods/reopen',
    op: reopenPeriod,
    sent: (r) => ({ id: r.body.id ?? '' }),
    answer: (p) => ({ redirect: withMessage(BACK, 'msg', `Period ${p.periodStart} – ${p.periodEnd} is open again.`) }),
  }),
];

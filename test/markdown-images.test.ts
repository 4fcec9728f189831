import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { operatorPrincipal } from '../src/core/auth/operator.ts';
import { makeCtx } from '../src/core/ctx.ts';
import { pollMailbox } from '../src/core/mail/intake/poll.ts';
import { connectImap } from '../src/jobs/machinery/imap.ts';
import { setMailbox } from '../src/core/mail/intake/settings.ts';
import { runOp } from '../src/core/operation.ts';
import { SecretBox } from '../src/core/mail/secret-box.ts';
import { renderMarkdown } from '../src/core/tickets/markdown.ts';
import { makeLogger } from '../src/log.ts';
import { startTestApp, type TestApp } from './helpers/app.ts';
import { loopbackGuard, startDovecot, type Dovecot } from './helpers/dovecot.ts';
import { makeProject, makeToken, makeUser, makeWorkspace, type Person, type Workspace } from './helpers/factories.ts';

// Issue 19, defect 10: a remote image in Markdown would be fetched by every reader's browser (a
// tracking pixel). The one rendering rule turns it into a link; only the workspace's own
// attachments stay images. Checked on the rule, and on the three ways text arrives: a description,
// a comment, a plain-text email (through a real dovecot).

const PIXEL = 'http://tracker.test/pixel.gif?reader=1';
const ATTACHMENT = '/api/w/acme/attachments/0f8fdb5e-8a5e-4c0e-9a8f-0a4b4a1b2c3d/download';

describe('the Markdown image rule', () => {
  it.each([
    ['![logo](http://tracker.test/a.png)', '<p><a href="http://tracker.test/a.png" rel="noopener noreferrer nofollow">logo</a></p>'],
    ['![](https://tracker.test/a.png)', '<p><a href="https://tracker.test/a.png" rel="noopener noreferrer nofollow">https://tracker.test/a.png</a></p>'],
    ['![ref][r]\n\n[r]: https://tracker.test/r.png', '<p><a href="https://tracker.test/r.png" rel="noopener noreferrer nofollow">ref</a></p>'],
    ['[![badge](https://tracker.test/b.svg)](https://ci.test)', '<p><a href="https://ci.test" rel="noopener noreferrer nofollow">badge</a></p>'],
    ['![dot](data:image/png;base64,iVBORw0KGgo=)', '<p>dot</p>'],
    ['![rel](images/a.png)', '<p>rel</p>'],
    ['![proto](//tracker.test/a.png)', '<p>proto</p>'],
    ['![<b>x</b>](https://tracker.test/a.png)', '<p><a href="https://tracker.test/a.png" rel="noopener noreferrer nofollow">&lt;b&gt;x&lt;/b&gt;</a></p>'],
    [`![shot](${ATTACHMENT})`, `<p><img src="${ATTACHMENT}" alt="shot" /></p>`],
    [`![shot](${ATTACHMENT}?x=https://tracker.test)`, '<p>shot</p>'],
  ])('%s', (source, html) => {
    expect(renderMarkdown(source).trim()).toBe(html);
  });
});

let app: TestApp;
let imap: Dovecot;
let ws: Workspace;
let owner: Person;
let token: string;
let projectId: string;

beforeAll(async () => {
  [app, imap] = await Promise.all([startTestApp(), startDovecot()]);
  ws = await makeWorkspace(app.db.sql);
  owner = await makeUser(app.db.sql, ws, { role: 'owner' });
  token = (await makeToken(app.db.sql, ws, owner)).token;
  projectId = (await makeProject(app.db.sql, ws)).id;
}, 60_000);
afterAll(async () => {
  await imap?.stop();
  await app?.close();
});

const api = (p: string) => `/api/w/${ws.slug}${p}`;

/** No <img> at all in the HTML, and the pixel's address only as a link. */
function noRemoteImage(html: string) {
  expect(html).not.toContain('<img');
  expect(html).toContain(`<a href="${PIXEL.replace('&', '&amp;')}" rel="noopener noreferrer nofollow">pixel</a>`);
}

describe('every way text arrives', () => {
  it('a description', async () => {
    const created = await app.call('POST', api('/tickets'), { token, body: { projectId, title: 'Logo', description: `See ![pixel](${PIXEL})` } });
    expect(created.status).toBe(201);
    const page = await app.call('GET', api(`/tickets/${created.body.humanId}`), { token });
    noRemoteImage(page.body.descriptionHtml);
  });

  it('a comment, as posted and as listed', async () => {
    const created = await app.call('POST', api('/tickets'), { token, body: { projectId, title: 'Comment' } });
    const ref = created.body.humanId;
    const posted = await app.call('POST', api(`/tickets/${ref}/comments`), { token, body: { body: `Look: ![pixel](${PIXEL})` } });
    expect(posted.status).toBe(201);
    noRemoteImage(posted.body.bodyHtml);
    const listed = await app.call('GET', api(`/tickets/${ref}/comments`), { token });
    noRemoteImage(listed.body.items[0].bodyHtml);
  });

  it('a plain-text email', async () => {
    const folder = `M${randomBytes(4).toString('hex')}`;
    const box = new SecretBox(randomBytes(32));
    const ctx = makeCtx({ sql: app.db.sql }, await operatorPrincipal(app.db.sql, ws.slug, owner.email));
    await runOp(
      setMailbox,
      { ...ctx, mailbox: { secrets: box, outbound: loopbackGuard } },
      { host: imap.host, port: imap.port, secure: false, user: imap.user, password: imap.password, folder },
    );
    await imap.deliver(
      folder,
      [
        'From: Pat Sender <pat@outside.test>',
        'To: support@agency.test',
        'Subject: Our logo',
        `Message-ID: <pixel-${randomBytes(4).toString('hex')}@outside.test>`,
        'Date: Mon, 23 Nov 2026 09:00:00 +0000',
        'MIME-Version: 1.0',
        'Content-Type: text/plain; charset=utf-8',
        '',
        `Hello, the logo is broken: ![pixel](${PIXEL})`,
        '',
      ].join('\r\n'),
    );
    const [{ id: mailboxId }] = await app.db.sql<[{ id: string }]>`select id from mailboxes where workspace_id = ${ws.id}`;
    const jobCtx = {
      sql: app.db.sql,
      now: () => new Date(),
      log: makeLogger('silent'),
      pdf: null,
      mailer: { send: () => Promise.reject(new Error('the intake sends no mail')) },
      mailFrom: 'Support <support@agency.test>',
      outbound: loopbackGuard,
    };
    expect(await pollMailbox(jobCtx, { mailboxId }, { connect: connectImap, secrets: box })).toMatchObject({ status: 'polled', counts: { imported: 1 } });
    const [{ ticketId }] = await app.db.sql<[{ ticketId: string }]>`select ticket_id as "ticketId" from intake_messages where mailbox_id = ${mailboxId}`;
    const page = await app.call('GET', api(`/tickets/${ticketId}`), { token });
    expect(page.status).toBe(200);
    expect(page.body.description).toContain(`![pixel](${PIXEL})`);
    noRemoteImage(page.body.descriptionHtml);
  });
});

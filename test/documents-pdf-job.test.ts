import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './helpers/app.ts';
import { pdfPages, pdfRenderer } from './helpers/pdf-tools.ts';
import { drainBillingJobs, jobCtx, makeBillingWorld } from './billing-world.ts';
import type { PdfRenderer } from '../src/core/documents/pdf-renderer.ts';

let app: TestApp;
let pdf: PdfRenderer;
beforeAll(async () => {
  app = await startTestApp();
  pdf = pdfRenderer();
});
afterAll(async () => {
  await pdf.close();
  await app.close();
});

describe('documents:render, pdf (issue 23: page x of y)', () => {
  it("stores pdfs whose every page has the document's number and its page x of y, in the client's language", async () => {
    const w = await makeBillingWorld(app);
    const res = await app.call('POST', `/api/w/${w.ws.slug}/billing/runs`, { session: w.session, body: { periodId: w.october.id } });
    expect(res.status).toBe(201);
    await drainBillingJobs(app.db.sql, jobCtx(app.db.sql, { pdf }));
    const docs = await app.db.sql<{ number: string; locale: string; content: Buffer }[]>`
      select number, locale, content from documents where run_id = ${res.body.id} and format = 'pdf' order by number`;
    expect(docs.map((d) => d.number.split('-')[0])).toEqual(expect.arrayContaining(['ACME', 'INI']));
    for (const d of docs) {
      const pages = pdfPages(d.content);
      const [title, pageOf] = d.locale.startsWith('de') ? ['Stundennachweis', 'Seite %i von %n'] : ['Timesheet', 'Page %i of %n'];
      pages.forEach((text, i) => {
        expect(text, `${d.number}, page ${i + 1}`).toContain(`${title} ${d.number}`);
        expect(text, `${d.number}, page ${i + 1}`).toContain(pageOf.replace('%i', String(i + 1)).replace('%n', String(pages.length)));
      });
    }
  });
});

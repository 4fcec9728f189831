import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { renderHtml } from '../src/core/documents/render/html.ts';
import { descendants, pdfPages, pdfRenderer } from './helpers/pdf-tools.ts';
import { timesheetFixture } from './helpers/timesheet-fixture.ts';

const doc = (marker: string, extra = '') => `<!DOCTYPE html><html><head><title>${marker}</title>${extra}</head><body><p>Document ${marker}</p></body></html>`;
const renderers = () => descendants('--type=renderer');

/**
 * Issue 25: pages are reused from one document to the next (a fresh context and page per
 * document cost 3-4x the print), without one document ever showing another's content, with a
 * page that crashed replaced, and one page per concurrent render.
 */
describe('pdf renderer: warm pages', () => {
  it('prints the next document on the same renderer process instead of starting one per document', async () => {
    const before = renderers();
    const pdf = pdfRenderer();
    try {
      await pdf.render(doc('one'));
      const first = renderers().filter((p) => !before.includes(p));
      expect(first.length).toBeGreaterThan(0);
      for (const marker of ['two', 'three']) expect(pdfPages(await pdf.render(doc(marker)))[0]).toContain(`Document ${marker}`);
      expect(renderers().filter((p) => !before.includes(p))).toEqual(first);
    } finally {
      await pdf.close();
    }
  });

  it("shows nothing of the previous document: content, styles, page rules and title are the next one's alone", async () => {
    const pdf = pdfRenderer();
    const fresh = pdfRenderer();
    try {
      const next = renderHtml(timesheetFixture('fr-FR'));
      const expected = pdfPages(await fresh.render(next));
      // a first document with everything that could linger: a style on every page, a landscape page rule, text after the body
      const first = doc(
        'SECRET-A',
        '<style>@page { size: A3 landscape; margin: 0 } body::before { content: "LINGERING-STYLE" } html::after { content: "LINGERING-AFTER" }</style>',
      );
      expect(pdfPages(await pdf.render(first)).join(' ')).toContain('LINGERING-STYLE');
      const pages = pdfPages(await pdf.render(next));
      expect(pages).toEqual(expected);
      for (const gone of ['SECRET-A', 'LINGERING']) expect(pages.join(' ')).not.toContain(gone);
    } finally {
      await pdf.close();
      await fresh.close();
    }
  });

  it('replaces a page whose renderer crashed: the next render still prints', async () => {
    const before = renderers();
    const pdf = pdfRenderer();
    try {
      await pdf.render(doc('before the crash'));
      const warm = renderers().filter((p) => !before.includes(p));
      expect(warm.length).toBeGreaterThan(0);
      for (const pid of warm) process.kill(pid, 'SIGKILL');
      // at once, before the crash may have been reported: the render that meets it is retried on a fresh page
      expect(pdfPages(await pdf.render(doc('right after')))[0]).toContain('Document right after');
      expect(pdfPages(await pdf.render(doc('later')))[0]).toContain('Document later');
      for (const pid of warm) expect(renderers()).not.toContain(pid);
    } finally {
      await pdf.close();
    }
  });

  it('gives each concurrent render a page of its own: every document prints its own content', async () => {
    const pdf = pdfRenderer();
    try {
      const markers = Array.from({ length: 6 }, (_, i) => `concurrent-${i}`);
      for (let round = 0; round < 2; round++) {
        const printed = await Promise.all(markers.map((m) => pdf.render(doc(m))));
        printed.forEach((bytes, i) => {
          const text = pdfPages(bytes).join(' ');
          expect(text).toContain(`Document ${markers[i]}`);
          for (const other of markers.filter((_, j) => j !== i)) expect(text).not.toContain(`Document ${other} `);
        });
      }
    } finally {
      await pdf.close();
    }
  });

  it('keeps refusing every request on a reused page', async () => {
    let requests = 0;
    const server = createServer((_req, res) => {
      requests += 1;
      res.end('body::after { content: "FETCHED" }');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const pdf = pdfRenderer();
    try {
      await pdf.render(doc('warm'));
      const hostile = doc('hostile', `<link rel="stylesheet" href="${base}/a.css"><style>@import url("${base}/b.css");</style>`);
      const text = pdfPages(await pdf.render(hostile + `<img src="${base}/d.png"><script>document.body.append('SCRIPT RAN')</script>`)).join(' ');
      expect(text).toContain('Document hostile');
      expect(text).not.toContain('FETCHED');
      expect(text).not.toContain('SCRIPT RAN');
      expect(pdfPages(await pdf.render(doc('after')))[0]).toContain('Document after');
      expect(requests).toBe(0);
    } finally {
      await pdf.close();
      server.close();
    }
  });

  it('throws away a page its document navigated away from: the next document still prints', async () => {
    let requests = 0;
    const server = createServer((_req, res) => {
      requests += 1;
      res.end('<p>FETCHED</p>');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const pdf = pdfRenderer();
    try {
      for (let i = 0; i < 3; i++) {
        // a refresh to a (blocked) address: it leaves while this document prints, or once its page is back among the
        // warm ones, or while the next document is being set on it (the race that once failed the next render)
        await pdf.render(doc(`leaving ${i}`, `<meta http-equiv="refresh" content="0; url=${base}/elsewhere">`)).catch(() => undefined);
        const text = pdfPages(await pdf.render(doc(`after ${i}`))).join(' ');
        expect(text).toContain(`Document after ${i}`);
        expect(text).not.toContain('leaving');
      }
      expect(requests).toBe(0);
    } finally {
      await pdf.close();
      server.close();
    }
  });
});

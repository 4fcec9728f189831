import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createPdfRenderer, findChromium } from '../src/jobs/machinery/pdf.ts';
import type { PdfRenderer } from '../src/core/documents/pdf-renderer.ts';
import { formatterFor } from '../src/core/documents/render/format.ts';
import { renderHtml } from '../src/core/documents/render/html.ts';
import { makeLogger } from '../src/log.ts';
import { largeTimesheet, timesheetFixture } from './helpers/timesheet-fixture.ts';

const PDFTOTEXT = '/usr/bin/pdftotext';
const PDFINFO = '/usr/bin/pdfinfo';
const dir = mkdtempSync(path.join(tmpdir(), 'wt-pdf-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The renderer over the installed chromium; a missing chromium or poppler fails the test, never skips it. */
function renderer(log = makeLogger('silent')): PdfRenderer {
  for (const tool of [PDFTOTEXT, PDFINFO]) expect(existsSync(tool), `${tool} is missing: apt-get install -y poppler-utils`).toBe(true);
  const chromium = findChromium(process.env.CHROMIUM_PATH);
  expect(chromium, 'no chromium found: apt-get install -y chromium').not.toBeNull();
  return createPdfRenderer(chromium, log)!;
}

let files = 0;
function pdfText(bytes: Uint8Array): { text: string; pages: number } {
  const file = path.join(dir, `doc-${++files}.pdf`);
  writeFileSync(file, bytes);
  const text = execFileSync(PDFTOTEXT, [file, '-'], { encoding: 'utf8' });
  const pages = Number(/^Pages:\s+(\d+)$/m.exec(execFileSync(PDFINFO, [file], { encoding: 'utf8' }))?.[1]);
  return { text: text.replace(/\s+/g, ' '), pages };
}

/** Live (not zombie) processes whose parent is this test process and whose command is chromium: the browsers we launched. */
function chromiumChildren(): number[] {
  const pids: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      const [state, ppid] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (Number(ppid) !== process.pid || state === 'Z') continue;
      if (readFileSync(`/proc/${name}/cmdline`, 'utf8').includes('chromium')) pids.push(Number(name));
    } catch {
      // the process ended while we looked
    }
  }
  return pids;
}

const asText = (bytes: Uint8Array) => Buffer.from(bytes.subarray(0, 5)).toString('latin1');

describe('pdf renderer', () => {
  it('prints a timesheet that pdftotext reads back: client, every ticket line, totals', async () => {
    const pdf = renderer();
    try {
      const model = timesheetFixture('en-US');
      const bytes = await pdf.render(renderHtml(model));
      expect(asText(bytes)).toBe('%PDF-');
      const { text, pages } = pdfText(bytes);
      expect(pages).toBeGreaterThanOrEqual(1);
      expect(text).toContain(model.client.name);
      expect(text).toContain(model.agency.name);
      expect(text).toContain(model.number);
      for (const line of model.sections.flatMap((s) => s.lines)) {
        expect(text).toContain(line.humanId);
        expect(text).toContain(line.text.replace(/\s+/g, ' '));
      }
      const f = formatterFor('en-US');
      expect(text).toContain(`Total hours ${f.hours(model.totals.minutes)}`);
      expect(text).toContain(`Charged hours ${f.hours(model.totals.chargedMinutes)}`);
    } finally {
      await pdf.close();
    }
  });

  it('prints the client locale: de-DE hours and dates', async () => {
    const pdf = renderer();
    try {
      const { text } = pdfText(await pdf.render(renderHtml(timesheetFixture('de-DE'))));
      expect(text).toContain('31.10.2026');
      expect(text).toContain('1,50');
      expect(text).toContain('Stundennachweis');
    } finally {
      await pdf.close();
    }
  });

  it('launches one browser for concurrent first renders and reuses it', async () => {
    const before = chromiumChildren();
    const pdf = renderer();
    try {
      const html = renderHtml(timesheetFixture('fr-FR'));
      const all = await Promise.all([pdf.render(html), pdf.render(html), pdf.render(html)]);
      for (const bytes of all) expect(asText(bytes)).toBe('%PDF-');
      const launched = chromiumChildren().filter((p) => !before.includes(p));
      expect(launched).toHaveLength(1);
      await pdf.render(html);
      expect(chromiumChildren().filter((p) => !before.includes(p))).toEqual(launched);
    } finally {
      await pdf.close();
    }
    expect(chromiumChildren().filter((p) => !before.includes(p))).toEqual([]);
  });

  it('launches the browser again after it was killed', async () => {
    const before = chromiumChildren();
    const pdf = renderer();
    try {
      const html = renderHtml(timesheetFixture('en-US'));
      expect(asText(await pdf.render(html))).toBe('%PDF-');
      const [first] = chromiumChildren().filter((p) => !before.includes(p));
      expect(first).toBeDefined();
      // The whole process group playwright started (browser and helpers), as a crash or the OOM killer would.
      process.kill(-first!, 'SIGKILL');
      const { text } = pdfText(await pdf.render(html));
      expect(text).toContain('Müller & Söhne AG');
      const now = chromiumChildren().filter((p) => !before.includes(p));
      expect(now).toHaveLength(1);
      expect(now[0]).not.toBe(first);
      // Killed while idle, and gone before the next render asks: the disconnection is seen first.
      process.kill(-now[0]!, 'SIGKILL');
      await expect.poll(() => chromiumChildren().includes(now[0]!)).toBe(false);
      expect(asText(await pdf.render(html))).toBe('%PDF-');
      expect(chromiumChildren().filter((p) => !before.includes(p) && p !== now[0])).toHaveLength(1);
    } finally {
      await pdf.close();
    }
  });

  it('fetches nothing and runs no script from a document', async () => {
    let requests = 0;
    const server = createServer((_req, res) => {
      requests += 1;
      res.end('body::after { content: "FETCHED" }');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const pdf = renderer();
    try {
      const html = `<!DOCTYPE html><html><head><link rel="stylesheet" href="${base}/a.css"><style>@import url("${base}/b.css");</style></head>
        <body><p>Self-contained</p><img src="${base}/c.png"><script>document.body.append('SCRIPT RAN')</script></body></html>`;
      const { text } = pdfText(await pdf.render(html));
      expect(text).toContain('Self-contained');
      expect(text).not.toContain('SCRIPT RAN');
      expect(text).not.toContain('FETCHED');
      expect(requests).toBe(0);
    } finally {
      await pdf.close();
      server.close();
    }
  });

  it('refuses to render once closed', async () => {
    const pdf = renderer();
    await pdf.render('<p>x</p>');
    await pdf.close();
    await expect(pdf.render('<p>x</p>')).rejects.toThrow(/closed/);
  });

  it('times a warm render of a 200-row timesheet (reported, not asserted)', async () => {
    const pdf = renderer();
    try {
      const html = renderHtml(largeTimesheet(200));
      await pdf.render(html);
      const started = performance.now();
      const bytes = await pdf.render(html);
      const ms = Math.round(performance.now() - started);
      const { text, pages } = pdfText(bytes);
      console.log(`pdf: warm render of a 200-row timesheet took ${ms} ms, ${pages} pages, ${bytes.length} bytes`);
      expect(text).toContain('WEB-299');
      expect(pages).toBeGreaterThan(1);
    } finally {
      await pdf.close();
    }
  });
});

describe('finding chromium', () => {
  it('takes the configured path when it is an executable file, and never another', () => {
    const found = findChromium();
    expect(found, 'no chromium found: apt-get install -y chromium').not.toBeNull();
    expect(['/usr/bin/chromium', '/usr/bin/chromium-browser']).toContain(found);
    expect(findChromium(found!)).toBe(found);
    expect(findChromium('/nonexistent/chromium')).toBeNull();
    const plain = path.join(dir, 'not-a-browser');
    writeFileSync(plain, '', { mode: 0o644 });
    expect(findChromium(plain)).toBeNull(); // a file, not executable
    expect(findChromium('/usr/bin')).toBeNull(); // executable, not a file
  });

  it('makes no renderer without chromium, and says so once', () => {
    const lines: string[] = [];
    const log = makeLogger('info', { write: (line: string) => void lines.push(line) });
    expect(createPdfRenderer(null, log)).toBeNull();
    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0]!)).toMatchObject({ level: 40, msg: 'no Chromium found: pdf documents are not made' });
  });
});

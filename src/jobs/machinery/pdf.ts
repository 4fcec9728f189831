import { accessSync, constants, statSync } from 'node:fs';
import { chromium, type Browser, type Page } from 'playwright-core';
import type { Logger } from '../../log.ts';
import type { PdfFooter, PdfRenderer } from '../../core/documents/pdf-renderer.ts';
import { escapeHtml } from '../../core/html.ts';

/** Where Debian and Ubuntu put their chromium; we never download a browser. */
const CANDIDATES = ['/usr/bin/chromium', '/usr/bin/chromium-browser'];

/** Chromium's flags, as checked on this machine kind (../shared/MACHINE-NOTES.md); /dev/shm is small in containers. */
export const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
  '--disable-dev-shm-usage',
];

/** A document that does not load within this is broken, not slow (a 200-row sheet prints in well under a second). */
const RENDER_TIMEOUT_MS = 30_000;

/**
 * The chromium to print with: `configured` (CHROMIUM_PATH) when set, else the first of Debian's
 * paths that exists. A configured path that is not an executable file gives null rather than a
 * fallback: the operator named a browser, and another one would be a surprise.
 */
export function findChromium(configured?: string): string | null {
  if (configured) return isExecutable(configured) ? configured : null;
  return CANDIDATES.find(isExecutable) ?? null;
}

/** The process's pdf renderer, or null (logged once) when there is no chromium: then no pdf is made. */
export function createPdfRenderer(path: string | null, log: Logger): PdfRenderer | null {
  if (!path) {
    log.warn('no Chromium found: pdf documents are not made');
    return null;
  }
  return new ChromiumPdfRenderer(path, log);
}

/** Warm pages kept between documents; more concurrent renders open more pages, and the extra ones are closed when done. */
const IDLE_PAGES = 4;

/**
 * One browser per process, launched on the first render and shared by all (a launch costs about
 * half a second); a few warm pages, one per concurrent render, each in a context of its own and
 * reused from one document to the next. A fresh context and page per document cost 3-4 times the
 * print itself (a new renderer process each, issue 25), and isolation does not need them: a
 * document's content is replaced whole by the next `setContent`, and it can leave nothing else
 * behind, as JavaScript is off and every request is refused (no storage, cookie or cache entry).
 * A page that failed a render, crashed, was closed or navigated away is thrown away; a browser
 * that died is launched again by the next render; a render that failed on a warm page or because
 * its browser died is retried once on a fresh page.
 */
class ChromiumPdfRenderer implements PdfRenderer {
  /** The launch in progress or done; concurrent first renders await the same one. */
  #launching: Promise<Browser> | null = null;
  /** Warm pages of the current browser, none in use. */
  #idle: Page[] = [];
  /** The browser of the current launch, once it is done: only its pages are kept. */
  #current: Browser | null = null;
  #closed = false;

  constructor(
    private readonly path: string,
    private readonly log: Logger,
  ) {}

  async render(html: string, footer?: PdfFooter): Promise<Uint8Array> {
    for (let attempt = 1; ; attempt++) {
      const launching = this.#launched();
      const browser = await launching;
      let page: Page | undefined;
      let warm = false;
      try {
        // the retry prints on a new page: the idle ones may have died with the one that failed
        [page, warm] = attempt === 1 ? await this.#take(browser) : [await this.#open(browser), false];
        const bytes = await print(page, html, footer);
        this.#giveBack(browser, page);
        return bytes;
      } catch (error) {
        // A page or browser that died may fail this render before it reports the crash or the
        // disconnection; a warm page may have been spoiled by its previous document (one that
        // navigated away after printing). Either way, once more on a fresh page: a document that
        // is itself broken fails there too, at the cost of one more attempt.
        const retry = warm || !browser.isConnected() || !page || crashed.has(page) || page.isClosed();
        if (page) await discard(page);
        if (this.#closed || !retry || attempt > 1) throw error;
        if (!browser.isConnected()) this.#forget(launching);
      }
    }
  }

  async close(): Promise<void> {
    this.#closed = true;
    const launching = this.#launching;
    this.#launching = null;
    this.#idle = [];
    const browser = await launching?.catch(() => null);
    await browser?.close();
  }

  /** A warm page of `browser` (and true), or a new one (and false). */
  async #take(browser: Browser): Promise<[Page, boolean]> {
    for (let page = this.#idle.pop(); page; page = this.#idle.pop()) {
      if (usable(page, browser)) return [page, true];
      await discard(page);
    }
    return [await this.#open(browser), false];
  }

  /** Keeps a page that printed for the next document, unless it is no longer usable or enough are kept. */
  #giveBack(browser: Browser, page: Page): void {
    if (!this.#closed && browser === this.#current && usable(page, browser) && this.#idle.length < IDLE_PAGES) this.#idle.push(page);
    else void discard(page);
  }

  /** A page in a context of its own: JavaScript off, service workers blocked, every request but data:/about: refused. */
  async #open(browser: Browser): Promise<Page> {
    const context = await browser.newContext({ javaScriptEnabled: false, serviceWorkers: 'block' });
    try {
      await context.route('**/*', (route) => (isInline(route.request().url()) ? route.continue() : route.abort('blockedbyclient')));
      const page = await context.newPage();
      page.on('crash', () => {
        crashed.add(page);
        this.log.warn('a Chromium page crashed; the next pdf opens another');
      });
      return page;
    } catch (error) {
      await context.close().catch(() => undefined);
      throw error;
    }
  }

  #launched(): Promise<Browser> {
    if (this.#closed) return Promise.reject(new Error('The pdf renderer is closed.'));
    if (this.#launching) return this.#launching;
    const launching = this.#launch();
    this.#launching = launching;
    launching.then(
      (browser) => {
        if (this.#launching === launching) this.#current = browser;
        browser.on('disconnected', () => {
          this.#forget(launching);
          if (!this.#closed) this.log.warn('Chromium disconnected; the next pdf launches it again');
        });
        if (!browser.isConnected()) this.#forget(launching);
      },
      () => this.#forget(launching),
    );
    return launching;
  }

  async #launch(): Promise<Browser> {
    const started = performance.now();
    // The worker handles the process's signals and closes us; playwright must not kill the browser on its own.
    const browser = await chromium.launch({ executablePath: this.path, args: CHROMIUM_ARGS, handleSIGINT: false, handleSIGTERM: false, handleSIGHUP: false });
    this.log.info({ path: this.path, ms: Math.round(performance.now() - started) }, 'Chromium launched for pdf documents');
    return browser;
  }

  /** Drops a launch that failed or whose browser died (and its warm pages), unless a newer one replaced it already. */
  #forget(launching: Promise<Browser>): void {
    if (this.#launching !== launching) return;
    this.#launching = null;
    this.#current = null;
    this.#idle = [];
  }
}

/** Pages whose renderer crashed: never printed on again (playwright leaves a crashed page open). */
const crashed = new WeakSet<Page>();

/** A page that can print the next document: alive, and still showing the content set on it (about:blank), not a page it navigated to. */
const usable = (page: Page, browser: Browser) => !crashed.has(page) && !page.isClosed() && browser.isConnected() && page.url() === 'about:blank';

/** Closes a page's context; fails quietly when the page or browser is gone already (the error that matters was thrown). */
async function discard(page: Page): Promise<void> {
  await page
    .context()
    .close()
    .catch(() => undefined);
}

/**
 * Prints one document on a warm page. `setContent` replaces the whole previous document; the
 * document is self-contained by construction, so anything it tries to fetch or run is an
 * injection that got past the escaping, and must achieve nothing.
 */
async function print(page: Page, html: string, footer?: PdfFooter): Promise<Uint8Array> {
  await page.setContent(html, { waitUntil: 'load', timeout: RENDER_TIMEOUT_MS });
  return page.pdf({
    format: 'A4',
    printBackground: true,
    // Chromium's own header and footer: the only way to know the page count while printing
    ...(footer ? { displayHeaderFooter: true, headerTemplate: '<span></span>', footerTemplate: footerTemplate(footer) } : {}),
  });
}

/**
 * Chromium's footer template: the core's words, escaped, with `{page}` and `{pages}` as the
 * spans Chromium fills in. The template is laid out in the page's bottom margin (the document's
 * `@page` rule) with none of the document's styles, hence its own font, size and side margins
 * (the timesheet's 14 mm).
 */
function footerTemplate({ start, end }: PdfFooter): string {
  const numbered = escapeHtml(end).replaceAll('{page}', '<span class="pageNumber"></span>').replaceAll('{pages}', '<span class="totalPages"></span>');
  return (
    '<div style="width: 100%; margin: 0 14mm; display: flex; justify-content: space-between; gap: 6mm; ' +
    "font-family: 'DejaVu Sans', 'Liberation Sans', Arial, sans-serif; font-size: 7pt; color: #555; -webkit-print-color-adjust: exact;\">" +
    `<span>${escapeHtml(start)}</span><span>${numbered}</span></div>`
  );
}

const isInline = (url: string) => url.startsWith('data:') || url.startsWith('about:');

function isExecutable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

import { accessSync, constants, statSync } from 'node:fs';
import { chromium, type Browser } from 'playwright-core';
import type { Logger } from '../../log.ts';
import type { PdfRenderer } from '../../core/documents/pdf-renderer.ts';

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

/**
 * One browser per process, launched on the first render and shared by all (a launch costs about
 * half a second, a render a few hundred ms); a fresh context per document, so no state (cache,
 * storage) passes from one client's document to another's. A browser that died is launched
 * again by the next render.
 */
class ChromiumPdfRenderer implements PdfRenderer {
  /** The launch in progress or done; concurrent first renders await the same one. */
  #launching: Promise<Browser> | null = null;
  #closed = false;

  constructor(
    private readonly path: string,
    private readonly log: Logger,
  ) {}

  async render(html: string): Promise<Uint8Array> {
    const launching = this.#launched();
    const browser = await launching;
    try {
      return await print(browser, html);
    } catch (error) {
      // A browser that crashed since the last render may fail this one before it reports its disconnection.
      if (this.#closed || browser.isConnected()) throw error;
      this.#forget(launching);
      return print(await this.#launched(), html);
    }
  }

  async close(): Promise<void> {
    this.#closed = true;
    const launching = this.#launching;
    this.#launching = null;
    const browser = await launching?.catch(() => null);
    await browser?.close();
  }

  #launched(): Promise<Browser> {
    if (this.#closed) return Promise.reject(new Error('The pdf renderer is closed.'));
    if (this.#launching) return this.#launching;
    const launching = this.#launch();
    this.#launching = launching;
    launching.then(
      (browser) => {
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

  /** Drops a launch that failed or whose browser died, unless a newer one replaced it already. */
  #forget(launching: Promise<Browser>): void {
    if (this.#launching === launching) this.#launching = null;
  }
}

/**
 * Prints one document in a context of its own. JavaScript is off and every request is refused:
 * the document is self-contained by construction, so anything it tries to fetch or run is an
 * injection that got past the escaping, and must achieve nothing.
 */
async function print(browser: Browser, html: string): Promise<Uint8Array> {
  const context = await browser.newContext({ javaScriptEnabled: false, serviceWorkers: 'block' });
  try {
    await context.route('**/*', (route) => (isInline(route.request().url()) ? route.continue() : route.abort('blockedbyclient')));
    const page = await context.newPage();
    await page.setContent(html, { waitUntil: 'load', timeout: RENDER_TIMEOUT_MS });
    return await page.pdf({ format: 'A4', printBackground: true });
  } finally {
    // Closing fails when the browser died; the error that matters is the one already thrown.
    await context.close().catch(() => undefined);
  }
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

import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { expect } from 'vitest';
import { createPdfRenderer, findChromium } from '../../src/jobs/machinery/pdf.ts';
import type { PdfRenderer } from '../../src/core/documents/pdf-renderer.ts';
import { makeLogger } from '../../src/log.ts';

const PDFTOTEXT = '/usr/bin/pdftotext';
const PDFINFO = '/usr/bin/pdfinfo';

/** The renderer over the installed chromium; a missing chromium or poppler fails the test, never skips it. */
export function pdfRenderer(log = makeLogger('silent')): PdfRenderer {
  for (const tool of [PDFTOTEXT, PDFINFO]) expect(existsSync(tool), `${tool} is missing: apt-get install -y poppler-utils`).toBe(true);
  const chromium = findChromium(process.env.CHROMIUM_PATH);
  expect(chromium, 'no chromium found: apt-get install -y chromium').not.toBeNull();
  return createPdfRenderer(chromium, log)!;
}

/** pdftotext of each page (whitespace folded), read back from the bytes through a temporary file. */
export function pdfPages(bytes: Uint8Array): string[] {
  const dir = mkdtempSync(path.join(tmpdir(), 'wt-pdf-pages-'));
  try {
    const file = path.join(dir, 'doc.pdf');
    writeFileSync(file, bytes);
    const pages = Number(/^Pages:\s+(\d+)$/m.exec(execFileSync(PDFINFO, [file], { encoding: 'utf8' }))?.[1]);
    return Array.from({ length: pages }, (_, i) =>
      execFileSync(PDFTOTEXT, ['-f', String(i + 1), '-l', String(i + 1), file, '-'], { encoding: 'utf8' }).replace(/\s+/g, ' '),
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Live processes descended from this one whose command line has `needle` (Chromium's renderers: `--type=renderer`). */
export function descendants(needle: string): number[] {
  const parent = new Map<number, number>();
  const state = new Map<number, string>();
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      const [s, ppid] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      parent.set(Number(name), Number(ppid));
      state.set(Number(name), s!);
    } catch {
      // the process ended while we looked
    }
  }
  const ours = (pid: number): boolean => {
    for (let p = parent.get(pid); p !== undefined && p > 1; p = parent.get(p)) if (p === process.pid) return true;
    return false;
  };
  return [...parent.keys()].filter((pid) => {
    if (state.get(pid) === 'Z' || !ours(pid)) return false;
    try {
      // Chromium rewrites its processes' command lines into one space-separated string
      return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split(/[\0 ]/).includes(needle);
    } catch {
      return false;
    }
  });
}

#!/usr/bin/env node
// `npm run build`: compiles src/ to dist/ with tsc (tsconfig.build.json; `./x.ts` imports become
// `./x.js`), copies the files under src/ that are not TypeScript (the console's css and js) to the
// same place under dist/, and removes from dist/ what no longer has a source. sql/ is not copied:
// dist/db/migrate.js reads ../../sql, the repository's own folder, as src/db/migrate.ts does.
// Plain JavaScript so that it runs with nothing but node and the installed typescript.
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, readdirSync, rmSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';

const root = path.resolve(import.meta.dirname, '..');
const src = path.join(root, 'src');
const dist = path.join(root, 'dist');

/** Paths relative to `dir` of every file below it. */
function files(dir, base = dir) {
  let out = [];
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, e.name);
    if (e.isDirectory()) out = out.concat(files(full, base));
    else out.push(path.relative(base, full));
  }
  return out;
}

const began = Date.now();
const secs = () => `${((Date.now() - began) / 1000).toFixed(1)} s`;
// A step a line, so that a minute of tsc is not a minute of silence (issue 26).
const step = (text) => console.log(`build: ${text}`);

step('compiling src/ to dist/ with tsc -p tsconfig.build.json (the longest step, about a minute on a small machine)…');
const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
const r = spawnSync(process.execPath, [tsc, '-p', path.join(root, 'tsconfig.build.json')], { stdio: 'inherit' });
if (r.status !== 0) {
  console.error('build: tsc failed; dist/ is not to be trusted');
  process.exit(r.status ?? 1);
}

step(`compiled (${secs()}); copying the console's static files and pruning what has no source any more…`);
const sources = files(src);
const wanted = new Set(['.tsbuildinfo']);
let copied = 0;
for (const f of sources) {
  if (f.endsWith('.ts')) {
    const js = f.slice(0, -3) + '.js';
    wanted.add(js).add(js + '.map');
    continue;
  }
  wanted.add(f);
  const to = path.join(dist, f);
  mkdirSync(path.dirname(to), { recursive: true });
  if (statSync(to, { throwIfNoEntry: false }) && statSync(to).mtimeMs >= statSync(path.join(src, f)).mtimeMs) continue;
  copyFileSync(path.join(src, f), to);
  copied++;
}
let removed = 0;
for (const f of files(dist)) {
  if (wanted.has(f)) continue;
  rmSync(path.join(dist, f));
  removed++;
}
step(`done in ${secs()}: ${copied} static file(s) copied, ${removed} stale file(s) removed; the Procfile's processes run from dist/`);

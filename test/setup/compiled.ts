import { copyFileSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { transformSync } from 'esbuild';

/**
 * src/ as JavaScript files for the service processes the tests start (test/helpers/roles.ts
 * `spawnRole`), transformed ahead of time by esbuild exactly as tsx transforms each file when it
 * loads it (tsx is esbuild's transform behind Node's module hooks), with relative `./x.ts` imports
 * pointed at `./x.js` as tsc's `rewriteRelativeImportExtensions` does for `npm run build`. Files that
 * are not TypeScript (the console's css and js) are copied, as scripts/build.js does.
 *
 * Why: a process started through tsx spent ~1.1 CPU-s more on loading its modules than the same
 * modules as files (the web role's imports: 1.8-2.0 against 0.6-0.7 CPU-s with process.cpuUsage),
 * and the suite starts a few dozen. The Procfile runs compiled files too (`npm run build`, checked by
 * test/build.test.ts); `npm start` and `npx wt` keep tsx and their own tests (test/start.test.ts,
 * test/readme.test.ts, the CLI tests through bin/wt.js).
 *
 * The folder must sit directly in the repository, at dist/'s depth: compiled modules find sql/ and
 * package.json by relative paths (src/db/migrate.ts, src/mcp/server.ts).
 */
export function compileSrc(root: string, out: string): void {
  const src = path.join(root, 'src');
  rmSync(out, { recursive: true, force: true });
  const walk = (dir: string) => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const from = path.join(dir, e.name);
      const to = path.join(out, path.relative(src, from));
      if (e.isDirectory()) {
        walk(from);
        continue;
      }
      mkdirSync(path.dirname(to), { recursive: true });
      if (!e.name.endsWith('.ts')) {
        copyFileSync(from, to);
        continue;
      }
      const { code } = transformSync(readFileSync(from, 'utf8'), {
        loader: 'ts',
        format: 'esm',
        target: 'node20',
        sourcefile: from,
        tsconfigRaw: { compilerOptions: { target: 'ES2022' } },
      });
      writeFileSync(to.slice(0, -3) + '.js', rewriteTsSpecifiers(code));
    }
  };
  walk(src);
}

/** `from "./x.ts"`, `import "./x.ts"` and `import("./x.ts")` become `.js`: relative specifiers only, as tsc rewrites them. */
function rewriteTsSpecifiers(code: string): string {
  return code.replace(/(\bfrom\s*|\bimport\s*\(?\s*)(["'])(\.{1,2}\/[^"'\n]*?)\.ts\2/g, '$1$2$3.js$2');
}

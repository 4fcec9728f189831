import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * The grep-level facts of issue 10: adapters only adapt. Each rule reads the source as text, so a
 * change that breaks one fails here with the file and line, before a reviewer has to spot it.
 */

const SRC = resolve(import.meta.dirname, '../src');

function filesUnder(dir: string): string[] {
  return readdirSync(join(SRC, dir), { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && e.name.endsWith('.ts'))
    .map((e) => join(e.parentPath, e.name));
}

/** Comments removed, so a rule is about code, not about a sentence explaining it. */
function code(file: string): string {
  return readFileSync(file, 'utf8')
    .replace(/\/\*[\s\S]*?\*\//g, (c) => c.replace(/[^\n]/g, ' '))
    .replace(/(^|[^:'"`])\/\/.*$/gm, '$1');
}

/** `file:line: text` of every match of `pattern` in the code of the files under `dir`. */
function hits(dir: string, pattern: RegExp): string[] {
  const found: string[] = [];
  for (const file of filesUnder(dir)) {
    code(file)
      .split('\n')
      .forEach((line, i) => {
        if (pattern.test(line)) found.push(`${relative(SRC, file)}:${i + 1}: ${line.trim()}`);
      });
  }
  return found;
}

interface Cruise {
  modules: { source: string; dependencies: { resolved: string; dependencyTypes: string[] }[] }[];
  summary: { violations: { rule: { name: string }; from: string; to: string }[]; ruleSetUsed: { forbidden: { name: string }[] } };
}

/**
 * The layering of src as `npm run check` checks it (.dependency-cruiser.cjs): run here too, so a
 * test run names the import that breaks it. Read once: a cruise of src takes seconds.
 */
let cruised: Cruise | null = null;
function cruise(): Cruise {
  if (cruised) return cruised;
  const bin = resolve(import.meta.dirname, '../node_modules/.bin/depcruise');
  let out: Buffer;
  try {
    out = execFileSync(bin, ['src', '--config', '.dependency-cruiser.cjs', '--output-type', 'json'], {
      cwd: resolve(import.meta.dirname, '..'),
      maxBuffer: 64 * 1024 * 1024,
    });
  } catch (err) {
    // it exits with the number of violations; the report is on stdout all the same
    out = (err as { stdout: Buffer }).stdout;
  }
  return (cruised = JSON.parse(out.toString()) as Cruise);
}

describe('architecture: adapters only adapt', () => {
  it('the layering holds: no import circle in src, the core imports no adapter and no machinery, no adapter imports another', () => {
    const { summary } = cruise();
    expect(summary.violations.map((v) => `${v.rule.name}: ${v.from} -> ${v.to}`)).toEqual([]);
    expect(summary.ruleSetUsed.forbidden.map((r) => r.name)).toEqual(
      expect.arrayContaining([
        'no-circular',
        'core-imports-no-adapter',
        'core-imports-no-machinery',
        'adapter-imports-no-other-adapter',
        'src-imports-no-tests',
      ]),
    );
  });

  it('the cruise sees the imports the rules are about (the rules above are not vacuous)', () => {
    const edges = cruise().modules.flatMap((m) =>
      m.dependencies.map((d) => ({ from: m.source, to: d.resolved, typeOnly: d.dependencyTypes.includes('type-only') })),
    );
    const count = (from: string, to: string) => edges.filter((e) => e.from.startsWith(from) && e.to.startsWith(to)).length;
    expect(count('src/mcp/', 'src/core/')).toBeGreaterThan(10);
    expect(count('src/http/', 'src/core/')).toBeGreaterThan(10);
    expect(count('src/jobs/machinery/', 'node_modules/')).toBeGreaterThan(3);
    // type-only imports are edges too: a circle of types is a circle
    expect(edges.some((e) => e.typeOnly && e.from.startsWith('src/core/'))).toBe(true);
  });

  it('configuration is passed in: only the composition roots read the environment or load the config', () => {
    const roots = new Set(['main.ts', 'app.ts', 'cli/main.ts', 'config.ts']);
    const reads = hits('.', /process\.env|\bloadConfig\(/).filter((h) => !roots.has(h.slice(0, h.indexOf(':'))));
    expect(reads).toEqual([]);
  });

  it('no refusal is decided in an adapter: no forbidden( in src/http or src/mcp', () => {
    expect(hits('http', /\bforbidden\(/)).toEqual([]);
    expect(hits('mcp', /\bforbidden\(/)).toEqual([]);
  });

  it('no contract limit is written in src/mcp: bounds come from the core', () => {
    // a numeric literal as a zod bound (`.max(20)`, `.min(-1440)`, `.length(8)`, ...)
    expect(hits('mcp', /\.(min|max|length|gt|gte|lt|lte)\(\s*-?[\d_]+\s*[,)]/)).toEqual([]);
    // the contract's distinctive limits: minutes a day, days a range, note and text lengths
    expect(hits('mcp', /(?<![\w.])-?(1440|366|10_?000|50_?000)(?![\w.])/)).toEqual([]);
  });

  it('the Inbox rule and the reasons of tool arguments live in the core', () => {
    expect(hits('mcp', /scopes\.has\('triage'\)/)).toEqual([]);
    expect(hits('mcp', /'link_required'/)).toEqual([]);
  });
});

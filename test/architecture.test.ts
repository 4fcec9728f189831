import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
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

/** The src folders (first path segment) that `dir`'s files import from, with where. */
function importsInto(dir: string, target: string): string[] {
  const found: string[] = [];
  for (const file of filesUnder(dir)) {
    for (const m of code(file).matchAll(/(?:from\s+|import\s*\(\s*|import\s+)'(\.[^']+)'/g)) {
      const into = relative(SRC, resolve(dirname(file), m[1]!)).split(/[\\/]/)[0];
      if (into === target) found.push(`${relative(SRC, file)} imports ${m[1]}`);
    }
  }
  return found;
}

describe('architecture: adapters only adapt', () => {
  it('no adapter imports another, and the core and the jobs import no adapter', () => {
    expect(importsInto('http', 'mcp')).toEqual([]);
    expect(importsInto('mcp', 'http')).toEqual([]);
    for (const inner of ['core', 'jobs']) {
      expect(importsInto(inner, 'http')).toEqual([]);
      expect(importsInto(inner, 'mcp')).toEqual([]);
    }
  });

  it('the import scan sees imports (the rule above is not vacuous)', () => {
    expect(importsInto('mcp', 'core').length).toBeGreaterThan(10);
    expect(importsInto('http', 'core').length).toBeGreaterThan(10);
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

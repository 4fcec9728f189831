import { invalid } from '../core/errors.ts';
import { toolsets, type Toolset } from './tool.ts';

/** How a connection narrows what its token allows (query string, headers, or `wt mcp` flags and environment). */
export interface McpOptions {
  /** Only these toolsets (null: all). */
  toolsets: ReadonlySet<Toolset> | null;
  /** Read-only connection: no tool that changes data. */
  readonly: boolean;
}

const TRUE = ['1', 'true', 'yes', 'on'];
const FALSE = ['0', 'false', 'no', 'off'];

/**
 * Parses `toolsets=tickets,time` and `readonly=1`. A value the server does not understand is
 * refused (400 `invalid`) rather than ignored: a typo in a toolset name used to list no tools at
 * all, and `readonly=on` used to give a writable connection. `field` names the option as the
 * caller spelled it (query parameter, header or environment variable). An empty `readonly` (a
 * bare `?readonly`) is refused too: reading it as "writable" is the mistake this guards against.
 */
export function parseOptions(
  toolsetsParam: string | undefined,
  readonlyParam: string | undefined,
  names: { toolsets: string; readonly: string } = { toolsets: 'toolsets', readonly: 'readonly' },
): McpOptions {
  let selected: Set<Toolset> | null = null;
  if (toolsetsParam !== undefined) {
    const given = toolsetsParam
      .split(',')
      .map((s) => s.trim().toLowerCase())
      .filter(Boolean);
    const unknown = given.filter((n) => !(toolsets as readonly string[]).includes(n));
    if (unknown.length > 0) {
      // single quotes: clients show this message inside the JSON body, where double quotes come out escaped
      throw invalid(
        'unknown_toolset',
        { field: names.toolsets, value: toolsetsParam.slice(0, 200), choices: [...toolsets] },
        `${names.toolsets}: unknown toolset ${unknown.map((u) => `'${u.slice(0, 50)}'`).join(', ')}; the toolsets are ${toolsets.join(', ')}.`,
      );
    }
    // an empty list selects nothing to narrow by: every toolset, as when the option is absent
    if (given.length > 0) selected = new Set(given as Toolset[]);
  }
  let readonly = false;
  if (readonlyParam !== undefined) {
    const v = readonlyParam.trim().toLowerCase();
    if (TRUE.includes(v)) readonly = true;
    else if (!FALSE.includes(v))
      throw invalid(
        'bad_readonly',
        { field: names.readonly, value: readonlyParam.slice(0, 200), choices: [...TRUE, ...FALSE] },
        `${names.readonly}: use one of ${TRUE.join('/')} or ${FALSE.join('/')}.`,
      );
  }
  return { toolsets: selected, readonly };
}

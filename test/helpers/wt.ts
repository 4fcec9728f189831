import { inspect } from 'node:util';
import { wt } from '../../src/cli/main.ts';

export interface WtResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * `wt ARGS` in this process (src/cli/main.ts's `wt`, what the program runs): the exit code and
 * what it printed, as runToEnd gives them for a real `node bin/wt.js` process. A tsx start per
 * command was most of the CLI tests' time; what only a process shows (bin/wt.js, exit codes as
 * the shell sees them, stdin) stays with real processes (test/cli.test.ts and one call a file).
 */
export async function wtHere(env: NodeJS.ProcessEnv, args: string[]): Promise<WtResult> {
  let stdout = '';
  let stderr = '';
  const code = await wt(args, {
    env,
    print: (line) => (stdout += `${line}\n`),
    error: (what) => (stderr += `${typeof what === 'string' ? what : inspect(what)}\n`),
  });
  return { code, stdout, stderr };
}

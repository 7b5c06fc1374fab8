import { accessSync, constants, existsSync, statSync } from 'node:fs';
import { delimiter, isAbsolute, join, resolve } from 'node:path';
import which from 'which';
import type { ServerProblem } from '../errors.js';
import { formatJsonPath } from '../config/expand-env.js';
import type { WorkbenchConfig } from '../config/types.js';
import { childEnvironment } from './transports.js';

/**
 * Whether each stdio server's `command` can be found where the workbench would start it (README "One bad part fails
 * only itself"): on the PATH its child gets (the entry's `env.PATH`, else the workbench's), or, for a command with a
 * slash, relative to its `cwd` (which must exist). `validate` lists the misses; connecting reports the same at once (slot-errors).
 */
export function missingCommandProblems(config: Pick<WorkbenchConfig, 'source' | 'toolboxes'>, env: Record<string, string | undefined>): Map<string, ServerProblem> {
  const found = new Map<string, ServerProblem>();
  for (const toolbox of config.toolboxes) {
    for (const server of toolbox.servers) {
      if (server.type !== 'stdio' || server.problems || server.command === '') continue;
      // A `${user:…}` in either is filled in at each start, for the user it serves: there is nothing to look at yet.
      if (`${server.command}${server.cwd ?? ''}`.includes('${user:')) continue;
      const at = ['toolboxes', toolbox.name, 'mcpServers', server.name];
      if (server.cwd !== undefined && !existsSync(server.cwd)) {
        found.set(`${toolbox.name}/${server.name}`, {
          kind: 'cwd-not-found',
          path: formatJsonPath([...at, 'cwd']),
          message: `"${server.cwd}" does not exist (a relative one is taken from where the workbench starts)`,
          fix: 'create it, or fix "cwd" (an absolute path always works)',
        });
        continue;
      }
      const childEnv = childEnvironment(server, env);
      const path = childEnv.PATH ?? childEnv.Path ?? '';
      const hasSlash = server.command.includes('/') || (process.platform === 'win32' && server.command.includes('\\'));
      const target = hasSlash && !isAbsolute(server.command) ? resolve(server.cwd ?? '.', server.command) : server.command;
      if (which.sync(target, { nothrow: true, path }) !== null) continue;
      found.set(`${toolbox.name}/${server.name}`, {
        kind: 'command-not-found',
        path: formatJsonPath([...at, 'command']),
        message: hasSlash
          ? `"${server.command}" does not exist or is not executable`
          : `"${server.command}" was not found on the PATH the server starts with${server.env?.PATH !== undefined ? ' (its own env.PATH)' : ''}`,
        fix: hasSlash
          ? 'install it there, or fix "command" (an absolute path always works)'
          : `install it, or give "command" as an absolute path (\`command -v ${server.command}\` prints it where it is installed); a client that starts the workbench may give it a shorter PATH than your shell`,
      });
    }
  }
  return found;
}

/** What a command name is on a PATH: whether some directory has it runnable, the first file of that name that is not, and the directories that could not be searched. */
export interface PathLookup {
  runnable: boolean;
  unrunnable?: string;
  unsearchable: string[];
}

/**
 * Looks for `command` in each directory of `path` as the system's lookup does, telling apart what its EACCES may mean:
 * a file of that name that is not executable, or directories that could not be searched (the command may be nowhere).
 */
export function lookOnPath(command: string, path: string): PathLookup {
  const found: PathLookup = { runnable: false, unsearchable: [] };
  for (const dir of path.split(delimiter)) {
    const file = join(dir === '' ? '.' : dir, command);
    try {
      if (!statSync(file).isFile()) continue;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'EACCES') found.unsearchable.push(dir);
      continue;
    }
    try {
      accessSync(file, constants.X_OK);
      found.runnable = true;
    } catch {
      found.unrunnable ??= file;
    }
  }
  return found;
}

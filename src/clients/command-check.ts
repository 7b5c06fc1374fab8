import { accessSync, constants, existsSync, statSync } from 'node:fs';
import { delimiter, dirname, resolve } from 'node:path';
import type { ServerProblem } from '../errors.js';
import { formatJsonPath } from '../config/expand-env.js';
import type { WorkbenchConfig } from '../config/types.js';
import { shellQuote } from '../shared/shell-quote.js';
import { searchPathOf } from './stdio-transport.js';
import { childEnvironment } from './transports.js';

/**
 * Whether each stdio server's `command` can be found where the workbench would start it (README "One bad part fails
 * only itself"), by {@link lookOnPath}: on the PATH its child gets (the entry's `env.PATH`, else the workbench's), its
 * empty and relative entries and a command with a slash taken from its `cwd` (which must exist). `validate` lists the
 * misses; connecting reports the same at once (slot-errors).
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
      const hasSlash = commandHasSlash(server.command);
      const lookup = lookOnPath(server.command, { path: searchPathOf(childEnvironment(server, env)), cwd: server.cwd, pathExt: env.PATHEXT });
      if (lookup.kind === 'found') continue;
      // Only a file without the execute bit: said so, as a start that fails with EACCES says it (slot-errors).
      if (lookup.kind === 'not-executable') {
        found.set(`${toolbox.name}/${server.name}`, {
          kind: 'command-not-found',
          path: formatJsonPath([...at, 'command']),
          message: `"${server.command}" is not executable: ${lookup.file}`,
          fix: `make it executable (\`chmod +x ${shellQuote(lookup.file)}\`), or fix "command" (an absolute path always works)`,
        });
        continue;
      }
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

/**
 * Where a server's command is, as the system's lookup finds it when the server starts: the file it runs; or only a file
 * of that name that is not executable (the first); or none. Folders that could not be searched (permission denied)
 * are listed beside a miss: the command may be in one of them.
 */
export type CommandLookup =
  | { kind: 'found'; file: string }
  | { kind: 'not-executable'; file: string; unsearchable: string[] }
  | { kind: 'not-found'; unsearchable: string[] };

/** Where a command is looked for: the child's PATH and the folder it runs in. */
export interface LookupPlace {
  /** The PATH of the child's environment (see searchPathOf); undefined: it has none, and the system's default is searched. */
  path: string | undefined;
  /** The folder the server runs in (its `cwd`; undefined: the workbench's own), where relative entries are taken from. */
  cwd: string | undefined;
  /** Windows: the extensions a command is tried with (the workbench's PATHEXT). */
  pathExt?: string | undefined;
}

const WINDOWS = process.platform === 'win32';
/** The PATH searched when the child's environment has none (glibc's and libuv's default). */
const DEFAULT_PATH = '/usr/bin:/bin';
const DEFAULT_PATHEXT = '.EXE;.CMD;.BAT;.COM';

/** Whether `command` is a path (looked at where it points) rather than a name (looked up on the PATH). */
export function commandHasSlash(command: string): boolean {
  return command.includes('/') || (WINDOWS && command.includes('\\'));
}

/**
 * Looks for `command` as the child's own lookup will (README "One bad part fails only itself"): a command with a slash
 * at that path, else in each directory of the PATH in turn. The lookup runs in the child, in the server's `cwd`: that
 * is where a relative path, an empty PATH entry (the current folder) and a relative one ("bin") are taken from, not
 * the workbench's own folder. On Windows, as cross-spawn looks it up (in that folder too): the current folder first,
 * the name with each extension of PATHEXT. Elsewhere a file must be executable; one that is not is what the system's
 * EACCES means, unless a directory could not be searched (it says EACCES then too). The one lookup of validate, doctor
 * and a failed start: the `which` package reported only runnable files, so it could not tell these apart.
 */
export function lookOnPath(command: string, place: LookupPlace): CommandLookup {
  const cwd = resolve(place.cwd ?? '.');
  const unsearchable: string[] = [];
  let unrunnable: string | undefined;
  for (const dir of searchedDirs(command, place.path)) {
    for (const name of candidateNames(command, place.pathExt)) {
      const file = resolve(cwd, dir, name);
      const verdict = fileVerdict(file);
      if (verdict === 'runnable') return { kind: 'found', file };
      if (verdict === 'unrunnable') unrunnable ??= file;
      if (verdict === 'unsearchable' && !unsearchable.includes(dirname(file))) unsearchable.push(dirname(file));
    }
  }
  return unrunnable !== undefined ? { kind: 'not-executable', file: unrunnable, unsearchable } : { kind: 'not-found', unsearchable };
}

/** The directories looked in, as written ('' is the current one): none but that for a path. */
function searchedDirs(command: string, path: string | undefined): string[] {
  if (commandHasSlash(command)) return [''];
  if (!WINDOWS) return (path ?? DEFAULT_PATH).split(delimiter);
  // cmd.exe (and cross-spawn, which finds the file for it) looks in the current directory first; an entry may be quoted.
  return ['', ...(path ?? '').split(delimiter).map((dir) => dir.replace(/^"(.*)"$/, '$1'))];
}

/**
 * The file names a command may have: itself; on Windows each with a PATHEXT extension, only the name itself when it
 * already ends in one (a file with another extension, or none, is no program there).
 */
function candidateNames(command: string, pathExt: string | undefined): string[] {
  if (!WINDOWS) return [command];
  const exts = (pathExt ?? DEFAULT_PATHEXT).split(';').filter((ext) => ext !== '');
  const own = exts.some((ext) => command.toLowerCase().endsWith(ext.toLowerCase())) ? [command] : [];
  return [...own, ...exts.map((ext) => `${command}${ext}`)];
}

/** What is at `file`: a file the child can run, one it cannot, nothing (or not a file), or a folder on the way that may not be searched. */
function fileVerdict(file: string): 'runnable' | 'unrunnable' | 'none' | 'unsearchable' {
  try {
    if (!statSync(file).isFile()) return 'none';
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EACCES' ? 'unsearchable' : 'none';
  }
  if (WINDOWS) return 'runnable';
  try {
    accessSync(file, constants.X_OK);
    return 'runnable';
  } catch {
    return 'unrunnable';
  }
}

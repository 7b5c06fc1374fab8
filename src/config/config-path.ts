import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { shellQuote } from '../shared/shell-quote.js';
import { WorkbenchError } from '../errors.js';
import type { EnvLike } from './expand-env.js';

export const DEFAULT_CONFIG_FILE = 'workbench-config.json';

export interface ResolvedConfigPath {
  /** Absolute path. */
  path: string;
  origin: 'flag' | 'WORKBENCH_CONFIG' | 'default';
}

/**
 * Chooses the config file: `--config` (the `flag`), else `WORKBENCH_CONFIG`, else `./workbench-config.json`; an empty
 * value counts as not given. Relative paths are resolved against `cwd`. A leading `~/` is replaced by `HOME` (or
 * `USERPROFILE`) from `env`, because MCP clients pass `env` entries to the workbench without a shell to expand it.
 * Never touches the file system and never fails.
 */
export function resolveConfigPath(opts: { flag?: string; env: EnvLike; cwd: string }): ResolvedConfigPath {
  const fromEnv = opts.env.WORKBENCH_CONFIG;
  const [given, origin]: [string, ResolvedConfigPath['origin']] =
    opts.flag !== undefined && opts.flag !== ''
      ? [opts.flag, 'flag']
      : fromEnv !== undefined && fromEnv !== ''
        ? [fromEnv, 'WORKBENCH_CONFIG']
        : [DEFAULT_CONFIG_FILE, 'default'];
  const home = opts.env.HOME || opts.env.USERPROFILE;
  const expanded = home && (given === '~' || given.startsWith('~/')) ? home + given.slice(1) : given;
  return { path: resolve(opts.cwd, expanded), origin };
}

/** How the path was chosen, for messages: `/x/y.json (from --config)`. */
export function describeConfigPath(resolved: ResolvedConfigPath): string {
  const how = { flag: 'from --config', WORKBENCH_CONFIG: 'from WORKBENCH_CONFIG', default: 'the default' }[resolved.origin];
  return `${resolved.path} (${how})`;
}

/**
 * The path of a config a command that starts servers may use: one named by `--config` or `WORKBENCH_CONFIG`. A file
 * found only as the default `./workbench-config.json` is refused: an MCP client may start the workbench inside a
 * cloned repository (Cursor starts it in the project's directory), and a config's servers are commands the workbench
 * runs and URLs it sends credentials to. Commands that only read or edit the file (`validate`, `init`, `server add`,
 * `migrate`) keep using the default.
 * @throws WorkbenchError `CONFIG_NOT_NAMED`
 */
export function configToStart(resolved: ResolvedConfigPath): string {
  if (resolved.origin !== 'default') return resolved.path;
  const found = existsSync(resolved.path)
    ? `${resolved.path} is in the start directory, but a config found there is not used on its own to start servers: ` +
      'a client may start the workbench inside a cloned repository, whose config could run any command. If the file ' +
      `is yours, name it: --config ${resolved.path} (or WORKBENCH_CONFIG=${resolved.path}).`
    : 'Name the config with --config FILE or the WORKBENCH_CONFIG environment variable (`mcp-workbench init` writes a ' +
      'starter one).';
  return throwNotNamed(found);
}

function throwNotNamed(detail: string): never {
  throw new WorkbenchError('CONFIG_NOT_NAMED', `No config named: commands that start servers use only a config named by --config or WORKBENCH_CONFIG. ${detail}`);
}

/**
 * What to do about a config file that exists but cannot be read, by the error's code (`EISDIR`, `EACCES`, …): a
 * directory is told the file in it to name; one that cannot be read, how to make it readable.
 */
export function unreadableConfigAdvice(path: string, code: string | undefined): string {
  if (code === 'EISDIR') return `Name the file in it: --config ${shellQuote(join(path, DEFAULT_CONFIG_FILE))} (or set WORKBENCH_CONFIG to it).`;
  if (code === 'EACCES' || code === 'EPERM') return `Make it readable (chmod u+r ${shellQuote(path)}), or name another file with --config or WORKBENCH_CONFIG.`;
  return 'Name another file with --config or WORKBENCH_CONFIG.';
}

import { resolve } from 'node:path';
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

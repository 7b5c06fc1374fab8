import { isAbsolute, join, resolve } from 'node:path';

/** The variable that moves the OAuth directory (tests point it into a temp directory: never the real home). */
export const OAUTH_DIR_VARIABLE = 'MCP_WORKBENCH_OAUTH_DIR';

/**
 * The directory of the OAuth token files (README "Remote servers behind OAuth"): `MCP_WORKBENCH_OAUTH_DIR`, else
 * `<homedir>/.mcp-workbench/oauth`. Resolved like the secret file: a blank value counts as unset, a leading `~` is
 * expanded to `homedir`, a relative path resolves against `cwd`. Pure.
 */
export function resolveOAuthDir(options: { env: Record<string, string | undefined>; homedir: string; cwd: string }): string {
  const explicit = options.env[OAUTH_DIR_VARIABLE]?.trim();
  if (!explicit) return join(options.homedir, '.mcp-workbench', 'oauth');
  const expanded = explicit === '~' || /^~[/\\]/.test(explicit) ? join(options.homedir, explicit.slice(1)) : explicit;
  return isAbsolute(expanded) ? expanded : resolve(options.cwd, expanded);
}

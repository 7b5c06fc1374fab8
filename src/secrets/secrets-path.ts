import { isAbsolute, join, resolve } from 'node:path';

/** The variable that moves the secret file (tests point it into a temp directory: never the real home). */
export const SECRETS_FILE_VARIABLE = 'MCP_WORKBENCH_SECRETS_FILE';

/**
 * The secret file: `MCP_WORKBENCH_SECRETS_FILE`, else `<homedir>/.mcp-workbench/secrets.json` (beside the default
 * tool-state file). Resolved like the state file (state/path): a blank value counts as unset, a leading `~` is
 * expanded to `homedir` (values from JSON client configs never pass through a shell), a relative path resolves against
 * `cwd`. `isDefault` tells whether the directory is the workbench's own, which it may tighten to 0700. Pure.
 */
export function resolveSecretsPath(options: { env: Record<string, string | undefined>; homedir: string; cwd: string }): { path: string; isDefault: boolean } {
  const explicit = options.env[SECRETS_FILE_VARIABLE]?.trim();
  if (!explicit) return { path: join(options.homedir, '.mcp-workbench', 'secrets.json'), isDefault: true };
  const expanded = explicit === '~' || /^~[/\\]/.test(explicit) ? join(options.homedir, explicit.slice(1)) : explicit;
  return { path: isAbsolute(expanded) ? expanded : resolve(options.cwd, expanded), isDefault: false };
}

import { isAbsolute, join, resolve } from 'node:path';

// ---------------------------------------------------------------------------------------------------------------
// Path resolution

/**
 * The state file to use: `--state-file`, else `WORKBENCH_STATE_FILE`, else `<homedir>/.mcp-workbench/tool-state.json`.
 * Blank values count as unset (so `WORKBENCH_STATE_FILE=` falls through). A leading `~` is expanded to `homedir`
 * because values from JSON client configs never pass through a shell; relative paths resolve against `cwd`
 * (default: the process's). Pure: never touches the file system.
 */
export function resolveStatePath(options: {
  flag?: string;
  env: Record<string, string | undefined>;
  homedir: string;
  cwd?: string;
}): string {
  const explicit = [options.flag, options.env.WORKBENCH_STATE_FILE].map((v) => v?.trim()).find((v) => !!v);
  if (!explicit) return join(options.homedir, '.mcp-workbench', 'tool-state.json');
  const expanded = explicit === '~' || /^~[/\\]/.test(explicit) ? join(options.homedir, explicit.slice(1)) : explicit;
  return isAbsolute(expanded) ? expanded : resolve(options.cwd ?? process.cwd(), expanded);
}

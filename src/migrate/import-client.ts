import { join } from 'node:path';
import type { EnvLike } from '../config/expand-env.js';
import { NAME_PATTERN, NAME_RULE, isRecord } from '../config/text.js';
import { WorkbenchError } from '../errors.js';
import { EntryConverter } from './entry-converter.js';
import { CLIENT_LABELS, type ClientKind, type ImportOptions, type ImportedServers, type ImportedVariable } from './import-types.js';
import { sanitizeName, uniqueName } from './server-names.js';

/**
 * Reading the MCP server block of another client's config file and turning each entry into a workbench server
 * entry. The formats, as their documentation gives them:
 *
 * - Claude Desktop, `claude_desktop_config.json`: `{ "mcpServers": { name: { command, args?, env? } } }`. Values are
 *   used literally (no variable expansion).
 * - Claude Code, a project's `.mcp.json`: `{ "mcpServers": { name: entry } }` where an entry is stdio
 *   (`type: "stdio"` optional, `command`, `args`, `env`) or remote (`type: "http" | "sse"`, `url`, `headers`);
 *   `${VAR}` and `${VAR:-default}` are expanded in command, args, env, url and headers — the same syntax as ours.
 *   `~/.claude.json` has the same block at the top level (user scope) and per project in
 *   `projects[<absolute path>].mcpServers` (local scope, which wins over user scope for the same name).
 * - VS Code, `.vscode/mcp.json` (or the profile's mcp.json): `{ "servers": { name: { type, command, args, env,
 *   envFile, url, headers } }, "inputs": [{ type: "promptString", id, description, password?, default? }] }`,
 *   with `${input:id}` (prompted), `${env:NAME}` and predefined variables such as `${workspaceFolder}`.
 *
 * Nothing here reads files or the process environment: the caller passes the parsed document and where it came from.
 */
export { CLIENT_KINDS, CLIENT_LABELS, type ClientKind, type ImportOptions, type ImportedServers, type ImportedVariable } from './import-types.js';

/**
 * Where each client keeps its config by default (for `--from <client>` without a file). Claude Code and VS Code
 * are the project files in `cwd`; Claude Desktop is per operating system.
 */
export function defaultClientConfigPath(client: ClientKind, env: EnvLike, platform: NodeJS.Platform, cwd: string): string {
  switch (client) {
    case 'claude-code':
      return join(cwd, '.mcp.json');
    case 'vscode':
      return join(cwd, '.vscode', 'mcp.json');
    case 'claude-desktop': {
      const home = env.HOME ?? env.USERPROFILE ?? '~';
      if (platform === 'darwin') return join(home, 'Library', 'Application Support', 'Claude', 'claude_desktop_config.json');
      if (platform === 'win32') return join(env.APPDATA ?? join(home, 'AppData', 'Roaming'), 'Claude', 'claude_desktop_config.json');
      return join(env.XDG_CONFIG_HOME ?? join(home, '.config'), 'Claude', 'claude_desktop_config.json');
    }
  }
}

/**
 * Converts the server block of a client config into workbench server entries. Entries that cannot be expressed
 * (unsupported transport, no command or URL, `disabled: true`) are skipped with a note; client-only keys are dropped
 * with a note; names are made valid and unique with a note per rename; VS Code variables become `${VAR}` references.
 *
 * @throws WorkbenchError `CONFIG_INVALID` when the document has no server block for this client (the message says
 *   which client the file looks like, if another), or when nothing in it can be imported.
 */
export function importClientServers(client: ClientKind, raw: unknown, options: ImportOptions): ImportedServers {
  const notes: string[] = [];
  const block = serverBlock(client, raw, options, notes);
  const variables = new Map<string, ImportedVariable>();
  const converter = new EntryConverter(client, options, raw, notes, variables);
  const servers: [string, Record<string, unknown>][] = [];
  const taken = new Set<string>();
  for (const [name, entry] of block) {
    const converted = converter.convert(name, entry);
    if (!converted) continue;
    const valid = NAME_PATTERN.test(name) ? name : sanitizeName(name);
    const unique = uniqueName(valid, taken);
    if (unique !== name) notes.push(`server "${name}" is imported as "${unique}" (${NAME_RULE}${valid !== unique ? '; the name was taken' : ''})`);
    taken.add(unique);
    servers.push([unique, converted]);
  }
  if (servers.length === 0) {
    throw new WorkbenchError('CONFIG_INVALID', `${options.source}: no ${CLIENT_LABELS[client]} server could be imported.`, { details: notes });
  }
  return { client, servers, notes, variables: [...variables.values()] };
}

function serverBlock(client: ClientKind, raw: unknown, options: ImportOptions, notes: string[]): [string, unknown][] {
  const label = CLIENT_LABELS[client];
  const key = client === 'vscode' ? 'servers' : 'mcpServers';
  if (!isRecord(raw)) throw new WorkbenchError('CONFIG_INVALID', `${options.source} is not a ${label} config: it is not a JSON object.`);
  const looksLike =
    client === 'vscode' && isRecord(raw.mcpServers)
      ? ' It has "mcpServers", like Claude Desktop and Claude Code files: try --from claude-code (or claude-desktop).'
      : client !== 'vscode' && isRecord(raw.servers)
        ? ' It has "servers", like a VS Code mcp.json: try --from vscode.'
        : isRecord(raw.toolboxes)
          ? ' It looks like a workbench config already.'
          : '';

  if (client === 'claude-code' && isRecord(raw.projects)) return claudeCodeUserFile(raw, raw.projects, options, notes);
  if (options.project !== undefined) {
    throw new WorkbenchError('USAGE', `--project applies to Claude Code's ~/.claude.json (a file with "projects"); ${options.source} has no "projects".`);
  }
  const block = raw[key];
  if (!isRecord(block)) {
    throw new WorkbenchError('CONFIG_INVALID', `${options.source} has no "${key}" object, so it is not a ${label} config.${looksLike}`);
  }
  const entries = Object.entries(block);
  if (entries.length === 0) throw new WorkbenchError('CONFIG_INVALID', `${options.source}: "${key}" is empty; there is nothing to import.`);
  return entries;
}

/** `~/.claude.json`: user-scope servers, plus one project's local-scope servers with `--project`. */
function claudeCodeUserFile(raw: Record<string, unknown>, projects: Record<string, unknown>, options: ImportOptions, notes: string[]): [string, unknown][] {
  const user = isRecord(raw.mcpServers) ? Object.entries(raw.mcpServers) : [];
  const withServers = Object.entries(projects)
    .filter(([, project]) => isRecord(project) && isRecord(project.mcpServers) && Object.keys(project.mcpServers).length > 0)
    .map(([path]) => path);
  if (options.project === undefined) {
    if (user.length === 0) {
      throw new WorkbenchError(
        'CONFIG_INVALID',
        `${options.source} has no user-scope servers (top-level "mcpServers").` +
          (withServers.length > 0 ? ` Projects with servers: ${withServers.join(', ')}; choose one with --project <path>.` : ''),
      );
    }
    if (withServers.length > 0) {
      notes.push(`imported the user-scope servers only; these projects have their own servers (add --project <path> to include one): ${withServers.join(', ')}`);
    }
    return user;
  }
  const wanted = options.project.replace(/[/\\]+$/, '');
  const found = Object.entries(projects).find(([path]) => path.replace(/[/\\]+$/, '') === wanted);
  if (!found || !isRecord(found[1])) {
    throw new WorkbenchError(
      'CONFIG_INVALID',
      `${options.source} has no project "${options.project}".` +
        (withServers.length > 0 ? ` Projects with servers: ${withServers.join(', ')}.` : ' No project in it has servers.'),
    );
  }
  const local = isRecord(found[1].mcpServers) ? Object.entries(found[1].mcpServers) : [];
  // Claude Code's precedence: local scope wins over user scope for the same name.
  const localNames = new Set(local.map(([name]) => name));
  const shadowed = user.filter(([name]) => localNames.has(name)).map(([name]) => name);
  if (shadowed.length > 0) notes.push(`the project's own entry is used for ${shadowed.map((n) => `"${n}"`).join(', ')} (it overrides the user-scope one, as in Claude Code)`);
  const merged = [...user.filter(([name]) => !localNames.has(name)), ...local];
  if (merged.length === 0) throw new WorkbenchError('CONFIG_INVALID', `${options.source}: neither the user scope nor project "${options.project}" has servers.`);
  return merged;
}

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
 *   with `${input:id}` (prompted), `${env:NAME}` and predefined variables such as `${workspaceFolder}`. The user
 *   `settings.json` holds the same under `"mcp": { "servers", "inputs" }`.
 * - Cursor, `~/.cursor/mcp.json` or a project's `.cursor/mcp.json`: `{ "mcpServers": { name: entry } }`, stdio
 *   (`command`, `args`, `env`, `envFile`) or remote (`url`, `headers`, with or without `type`); `${env:NAME}`,
 *   `${userHome}`, `${workspaceFolder}` are interpolated, as in VS Code.
 * - Windsurf, `~/.codeium/windsurf/mcp_config.json`: `{ "mcpServers": { name: entry } }`, stdio as above or remote
 *   with `serverUrl` (or `url`) and `headers`; `${env:NAME}` is interpolated; `disabled: true` switches one off.
 * - A workbench config (0.9's too: `transport` for `type`): one toolbox's `mcpServers`, entries as they are.
 *
 * Every client: an entry with a `url` and no `type` is `http`, or `sse` when the URL's path ends in `/sse`; an entry
 * that runs the workbench itself is skipped; a literal credential becomes a `${VAR}` reference (never copied).
 *
 * Nothing here reads files or the process environment: the caller passes the parsed document and where it came from.
 */
export { CLIENT_KINDS, CLIENT_LABELS, type ClientKind, type ImportOptions, type ImportedServers, type ImportedVariable } from './import-types.js';

/**
 * Where each client keeps its config by default (for `--from <client>` without a file), most specific first: the
 * caller reads the first that exists. Project files are looked for in `cwd`, user files under the home folder.
 */
export function defaultClientConfigPaths(client: ClientKind, env: EnvLike, platform: NodeJS.Platform, cwd: string): string[] {
  const home = env.HOME ?? env.USERPROFILE ?? '~';
  switch (client) {
    case 'claude-code':
      return [join(cwd, '.mcp.json'), join(home, '.claude.json')];
    case 'cursor':
      return [join(cwd, '.cursor', 'mcp.json'), join(home, '.cursor', 'mcp.json')];
    case 'vscode':
      return [join(cwd, '.vscode', 'mcp.json')];
    case 'windsurf':
      return [join(home, '.codeium', 'windsurf', 'mcp_config.json')];
    case 'workbench':
      return [join(cwd, 'workbench-config.json')];
    case 'claude-desktop': {
      if (platform === 'darwin') return [join(home, 'Library', 'Application Support', 'Claude', 'claude_desktop_config.json')];
      if (platform === 'win32') return [join(env.APPDATA ?? join(home, 'AppData', 'Roaming'), 'Claude', 'claude_desktop_config.json')];
      return [join(env.XDG_CONFIG_HOME ?? join(home, '.config'), 'Claude', 'claude_desktop_config.json')];
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
  const { entries: block, scope } = serverBlock(client, raw, options, notes);
  const variables = new Map<string, ImportedVariable>();
  const converter = new EntryConverter(client, options, scope, notes, variables);
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

/**
 * The entries to import, and the object they sit in (for VS Code's `inputs`, which sit beside `servers`). VS Code's
 * `settings.json` holds the same block under `"mcp": { "servers", "inputs" }` (or the dotted keys `"mcp.servers"`).
 */
function serverBlock(client: ClientKind, raw: unknown, options: ImportOptions, notes: string[]): { entries: [string, unknown][]; scope: unknown } {
  const label = CLIENT_LABELS[client];
  const key = client === 'vscode' ? 'servers' : 'mcpServers';
  if (!isRecord(raw)) throw new WorkbenchError('CONFIG_INVALID', `${options.source} is not a ${label} config: it is not a JSON object.`);
  if (client === 'workbench') return { entries: workbenchToolbox(raw, options, notes), scope: raw };
  if (client === 'vscode' && !isRecord(raw.servers)) {
    if (isRecord(raw.mcp) && isRecord(raw.mcp.servers)) raw = raw.mcp;
    else if (isRecord(raw['mcp.servers'])) raw = { servers: raw['mcp.servers'], inputs: raw['mcp.inputs'] };
  }
  if (!isRecord(raw)) throw new WorkbenchError('CONFIG_INVALID', `${options.source} is not a ${label} config.`);
  const looksLike =
    client === 'vscode' && isRecord(raw.mcpServers)
      ? ' It has "mcpServers", like Claude Desktop and Claude Code files: try --from claude-code (or claude-desktop).'
      : client !== 'vscode' && isRecord(raw.servers)
        ? ' It has "servers", like a VS Code mcp.json: try --from vscode.'
        : isRecord(raw.toolboxes)
          ? ' It looks like a workbench config already.'
          : '';

  if (client === 'claude-code' && isRecord(raw.projects)) return { entries: claudeCodeUserFile(raw, raw.projects, options, notes), scope: raw };
  if (options.project !== undefined) {
    throw new WorkbenchError('USAGE', `--project applies to Claude Code's ~/.claude.json (a file with "projects"); ${options.source} has no "projects".`);
  }
  const block = raw[key];
  if (!isRecord(block)) {
    throw new WorkbenchError('CONFIG_INVALID', `${options.source} has no "${key}" object, so it is not a ${label} config.${looksLike}`);
  }
  const entries = Object.entries(block);
  if (entries.length === 0) throw new WorkbenchError('CONFIG_INVALID', `${options.source}: "${key}" is empty; there is nothing to import.`);
  return { entries, scope: raw };
}

/**
 * A workbench config (0.9 or later) as the source: the servers of one of its toolboxes — `options.toolbox` when it
 * has one of that name, else its only toolbox. (To update a 0.9 file in place, `migrate --config FILE` is the tool.)
 * A toolbox or server whose name starts with `$` or `_` (how such a file comments an entry out; no toolbox or server
 * may be named so) is never imported as a live one; a parked server is named in a note.
 */
function workbenchToolbox(raw: Record<string, unknown>, options: ImportOptions, notes: string[]): [string, unknown][] {
  const toolboxes = raw.toolboxes;
  const names = isRecord(toolboxes) ? Object.keys(toolboxes).filter((name) => !isComment(name)) : [];
  if (!isRecord(toolboxes) || names.length === 0) {
    throw new WorkbenchError('CONFIG_INVALID', `${options.source} has no "toolboxes" object, so it is not a workbench config.`);
  }
  const chosen = options.toolbox !== undefined && names.includes(options.toolbox) ? options.toolbox : names.length === 1 ? names[0]! : undefined;
  if (chosen === undefined) {
    throw new WorkbenchError('USAGE', `${options.source} has several toolboxes (${names.join(', ')}) and none is called "${options.toolbox ?? ''}": name the one to import with --toolbox.`);
  }
  const toolbox = toolboxes[chosen];
  const servers = isRecord(toolbox) ? toolbox.mcpServers : undefined;
  const entries = isRecord(servers) ? Object.entries(servers) : [];
  for (const [name, entry] of entries) {
    if (isComment(name) && isRecord(entry)) {
      notes.push(`server "${name}" was left out: a name starting with "$" or "_" is how a workbench config comments an entry out (it is never a server's name), so it stays parked; rename it in ${options.source} to import it`);
    }
  }
  const live = entries.filter(([name]) => !isComment(name));
  if (live.length === 0) throw new WorkbenchError('CONFIG_INVALID', `${options.source}: toolbox "${chosen}" has no servers to import.`, { details: notes });
  return live;
}

/** A key a workbench config reads as a comment. */
const isComment = (key: string): boolean => key.startsWith('$') || key.startsWith('_');

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

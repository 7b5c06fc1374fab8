import { NAME_PATTERN, NAME_RULE, isRecord } from '../config/text.js';
import { WorkbenchError } from '../errors.js';
import { documentToEdit, finish } from './apply-plan.js';
import type { ConfigEdit } from './config-edit.js';
import type { Plan } from './plan.js';

/**
 * `init`, `server add` and `server remove` (README "Command line"): the text of a starter config, and single-server
 * edits of a config's text that keep every other byte (comments, order, formatting) through the same plan machinery
 * as `migrate`. Every result is checked as the loader would load it before it is offered; nothing here touches files.
 */

/**
 * A commented starter config (JSONC) with one toolbox and one reference server: it passes `validate` as written and
 * shows, as comments, how a remote server and a secret are written. `schema` is the `$schema` reference.
 */
export function starterConfigText(schema: string): string {
  return `// MCP Workbench config. This is JSONC: comments and trailing commas are fine.
// Every key is explained in the README ("Configuration"); check the file with: mcp-workbench validate
// Add servers with:    mcp-workbench server add <toolbox> <name> -- <command> [args…]
//                      mcp-workbench server add <toolbox> <name> --url https://example.com/mcp
// Or import a client's: mcp-workbench migrate --from claude-code|claude-desktop|cursor|vscode|windsurf --toolbox <name>
{
  "$schema": ${JSON.stringify(schema)},
  "toolboxes": {
    // A toolbox is a group of servers the model opens by name (open_toolbox); nothing starts before that.
    "dev": {
      "description": "Everyday tools",
      "mcpServers": {
        // A local (stdio) server: the workbench starts it on first use and stops it when the client goes away.
        "memory": { "command": "npx", "args": ["-y", "@modelcontextprotocol/server-memory"] },
        // A remote server; keep tokens out of the file with \${VAR} (from the environment) or \${secret:NAME}:
        // "docs": { "type": "http", "url": "https://example.com/mcp", "headers": { "Authorization": "Bearer \${DOCS_TOKEN}" } },
      },
    },
  },
}
`;
}

export interface ServerSpec {
  /** stdio: the command and its arguments. */
  command?: string;
  args?: string[];
  env?: Record<string, string>;
  /** Remote: the URL, its transport (default: `sse` when the path ends in `/sse`, else `http`) and headers. */
  url?: string;
  type?: 'http' | 'sse';
  headers?: Record<string, string>;
}

/** The server entry for a spec, keys in the order people write them. */
export function serverEntry(spec: ServerSpec): Record<string, unknown> {
  if (spec.url !== undefined) {
    const type = spec.type ?? (/\/sse\/?$/i.test(spec.url.replace(/[?#].*$/, '')) ? 'sse' : 'http');
    return { type, url: spec.url, ...(spec.headers && Object.keys(spec.headers).length > 0 && { headers: spec.headers }) };
  }
  return {
    command: spec.command,
    ...(spec.args && spec.args.length > 0 && { args: spec.args }),
    ...(spec.env && Object.keys(spec.env).length > 0 && { env: spec.env }),
  };
}

function checkName(kind: 'toolbox' | 'server', name: string): void {
  if (!NAME_PATTERN.test(name)) throw new WorkbenchError('USAGE', `"${name}" is not a valid ${kind} name (${NAME_RULE}).`);
}

/**
 * Adds server `name` to `toolbox` in the config text (creating the toolbox, or `toolboxes`, when missing).
 *
 * @throws WorkbenchError `USAGE` for an invalid name or a server of that name already in the toolbox;
 *   `CONFIG_PARSE`/`CONFIG_INVALID` when the file does not parse or the result would not load (nothing to write then).
 */
export function addServerText(text: string, source: string, toolbox: string, name: string, spec: ServerSpec, description?: string): ConfigEdit {
  checkName('toolbox', toolbox);
  checkName('server', name);
  const document = documentToEdit(text, source);
  if (!isRecord(document)) throw new WorkbenchError('CONFIG_INVALID', `${source} is not a JSON object.`);
  const entry = serverEntry(spec);
  const plan: Plan = { ops: [], changes: [], notes: [] };
  const toolboxes = document.toolboxes;
  const at = `toolboxes.${toolbox}.mcpServers.${name}`;
  if (toolboxes === undefined) {
    plan.ops.push({ op: 'insert', path: [], entries: [['toolboxes', { [toolbox]: { ...(description !== undefined && { description }), mcpServers: { [name]: entry } } }]] });
    plan.changes.push({ path: at, message: `added, in the new toolbox "${toolbox}"` });
  } else if (!isRecord(toolboxes)) {
    throw new WorkbenchError('CONFIG_INVALID', `${source}: "toolboxes" is not an object, so no server can be added to it.`);
  } else if (toolboxes[toolbox] === undefined) {
    plan.ops.push({ op: 'insert', path: ['toolboxes'], entries: [[toolbox, { ...(description !== undefined && { description }), mcpServers: { [name]: entry } }]] });
    plan.changes.push({ path: at, message: `added, in the new toolbox "${toolbox}"` });
  } else {
    const box = toolboxes[toolbox];
    const servers = isRecord(box) ? box.mcpServers : undefined;
    if (isRecord(box) && servers === undefined) {
      plan.ops.push({ op: 'insert', path: ['toolboxes', toolbox], entries: [['mcpServers', { [name]: entry }]] });
    } else if (!isRecord(servers)) {
      throw new WorkbenchError('CONFIG_INVALID', `${source}: toolbox "${toolbox}" has no "mcpServers" object to add to.`);
    } else if (servers[name] !== undefined) {
      throw new WorkbenchError('USAGE', `Toolbox "${toolbox}" in ${source} already has a server "${name}"; remove it first (mcp-workbench server remove ${toolbox} ${name}) or choose another name.`);
    } else {
      plan.ops.push({ op: 'insert', path: ['toolboxes', toolbox, 'mcpServers'], entries: [[name, entry]] });
    }
    plan.changes.push({ path: at, message: 'added' });
  }
  return finish(text, document, plan, source);
}

/**
 * Removes server `name` from `toolbox`; a toolbox left without servers stays (with an empty `mcpServers`).
 *
 * @throws WorkbenchError `TOOLBOX_NOT_FOUND` / `USAGE` (no such server, with the ones there are);
 *   `CONFIG_PARSE`/`CONFIG_INVALID` as {@link addServerText}.
 */
export function removeServerText(text: string, source: string, toolbox: string, name: string): ConfigEdit {
  const document = documentToEdit(text, source);
  const toolboxes = isRecord(document) ? document.toolboxes : undefined;
  const box = isRecord(toolboxes) ? toolboxes[toolbox] : undefined;
  if (!isRecord(toolboxes) || !isRecord(box)) {
    const names = isRecord(toolboxes) ? Object.keys(toolboxes) : [];
    throw new WorkbenchError('TOOLBOX_NOT_FOUND', `${source} has no toolbox "${toolbox}"${names.length > 0 ? ` (toolboxes: ${names.join(', ')})` : ''}.`);
  }
  const servers = isRecord(box.mcpServers) ? box.mcpServers : {};
  if (servers[name] === undefined) {
    const names = Object.keys(servers);
    throw new WorkbenchError('USAGE', `Toolbox "${toolbox}" has no server "${name}"${names.length > 0 ? ` (servers: ${names.join(', ')})` : ''}.`);
  }
  const plan: Plan = { ops: [{ op: 'remove', path: ['toolboxes', toolbox, 'mcpServers', name] }], changes: [{ path: `toolboxes.${toolbox}.mcpServers.${name}`, message: 'removed' }], notes: [] };
  if (Object.keys(servers).length === 1) plan.notes.push(`toolbox "${toolbox}" has no servers now; remove it by hand if it is no longer needed`);
  return finish(text, document, plan, source);
}

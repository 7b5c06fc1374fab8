import { readFileSync } from 'node:fs';
import { formatJsonPath } from '../config/expand-env.js';
import { NAME_PATTERN, NAME_RULE, isRecord } from '../config/text.js';
import { editDistance } from '../shared/edit-distance.js';
import type { ConfigChange } from './config-edit.js';
import { sanitizeName, uniqueName } from './server-names.js';

// ---------------------------------------------------------------------------------------------------------------
// Planning: what to change, as operations on paths of the original document.

export type Op =
  | { op: 'rename'; path: string[]; to: string }
  | { op: 'remove'; path: string[] }
  | { op: 'insert'; path: string[]; entries: [string, unknown][] };

export interface Plan {
  ops: Op[];
  changes: ConfigChange[];
  notes: string[];
}

const DYNAMIC_NOTE =
  'Dynamic mode was removed in 0.10.0. The workbench no longer registers downstream tools on itself, so clients ' +
  'do not see tools such as dev__memory__read_graph in their tool list any more. They call open_toolbox ' +
  '{ "toolbox_name": "dev" } to connect a toolbox and list its tools, then use_tool { "toolbox_name": "dev", ' +
  '"tool_name": "dev__memory__read_graph", "arguments": { … } } to call one. Canonical names are unchanged.';

/** The same, for a config whose toolbox or server names had to change (each rename has its own note). */
const DYNAMIC_NOTE_RENAMED = DYNAMIC_NOTE.replace(
  'Canonical names are unchanged.',
  'Canonical names are unchanged, except for the toolboxes and servers renamed below.',
);

const META_TOOL_NOTE = "0.9's workbench_open_toolbox and workbench_use_tool are now called open_toolbox and use_tool.";

export const DEFAULT_MODE_NOTE =
  '0.9 configs without "toolMode" ran in dynamic mode: if this one was used with 0.9, clients now reach tools through open_toolbox and use_tool (see MIGRATION.md).';

interface SchemaKeys {
  top: string[];
  toolbox: string[];
  server: string[];
}

let schemaKeys: SchemaKeys | undefined;

/** The keys each level allows, read from the schema the loader validates with, so the two never disagree. */
function keys(): SchemaKeys {
  if (schemaKeys) return schemaKeys;
  const document = JSON.parse(readFileSync(new URL('../../workbench-config.schema.json', import.meta.url), 'utf8')) as {
    properties: Record<string, unknown>;
    definitions: { toolbox: { properties: Record<string, unknown> }; server: { properties: Record<string, unknown> } };
  };
  schemaKeys = {
    top: Object.keys(document.properties),
    toolbox: Object.keys(document.definitions.toolbox.properties),
    server: Object.keys(document.definitions.server.properties),
  };
  return schemaKeys;
}

/** The keys a workbench server entry may have, as the schema gives them. */
export function serverKeys(): readonly string[] {
  return keys().server;
}

export function planMigration(document: unknown): Plan {
  const plan: Plan = { ops: [], changes: [], notes: [] };
  if (!isRecord(document)) return plan;
  const schema = keys();

  if ('toolMode' in document) {
    const mode = document.toolMode;
    plan.ops.push({ op: 'remove', path: ['toolMode'] });
    const shown = JSON.stringify(mode);
    if (mode === 'dynamic') {
      plan.changes.push({ path: 'toolMode', message: `removed "toolMode": "dynamic" (dynamic mode was removed in 0.10.0)` });
      plan.notes.push(DYNAMIC_NOTE, META_TOOL_NOTE);
    } else if (mode === 'proxy') {
      plan.changes.push({ path: 'toolMode', message: 'removed "toolMode": "proxy" (deprecated: the workbench is always proxy-only)' });
      plan.notes.push(META_TOOL_NOTE);
    } else {
      plan.changes.push({ path: 'toolMode', message: `removed "toolMode": ${shown} (not a mode 0.9 knew either; the workbench is proxy-only)` });
    }
  }
  commentUnknownKeys(document, [], schema.top, plan);

  const toolboxes = document.toolboxes;
  if (!isRecord(toolboxes)) return plan;
  const parkedToolboxes = park(document, ['toolboxes'], toolboxes, [], plan);
  const toolboxNames = validNames(Object.keys(toolboxes).filter((name) => !parkedToolboxes.has(name)), 'toolbox', ['toolboxes'], plan);
  let renames = toolboxNames.size;
  for (const [name, toolbox] of Object.entries(toolboxes)) {
    if (!isRecord(toolbox) || parkedToolboxes.has(name)) continue;
    const at = ['toolboxes', name];
    const renamed = toolboxNames.get(name);
    if (renamed !== undefined) {
      plan.notes.push(`tools of toolbox "${name}" are now named ${renamed}__{server}__{tool}; update state-file entries or --disabled-tools patterns that used the old name`);
    }
    commentUnknownKeys(toolbox, at, schema.toolbox, plan);
    const servers = toolbox.mcpServers;
    if (!isRecord(servers)) continue;
    const parkedServers = park(toolbox, [...at, 'mcpServers'], servers, ['toolboxes', renamed ?? name], plan);
    const serverNames = validNames(Object.keys(servers).filter((server) => !parkedServers.has(server)), 'server', [...at, 'mcpServers'], plan);
    for (const [old, renamedServer] of serverNames) {
      plan.notes.push(
        `tools of server "${old}" in toolbox "${renamed ?? name}" are now named ${renamed ?? name}__${renamedServer}__{tool}; update state-file entries or --disabled-tools patterns that used the old name`,
      );
    }
    renames += serverNames.size;
    for (const [serverName, server] of Object.entries(servers)) {
      if (isRecord(server) && !parkedServers.has(serverName)) planServer(server, [...at, 'mcpServers', serverName], schema.server, plan);
    }
  }
  if (renames > 0) plan.notes = plan.notes.map((note) => (note === DYNAMIC_NOTE ? DYNAMIC_NOTE_RENAMED : note));
  return plan;
}

/** One server entry: 0.9's `transport` becomes `type`; keys 0.10 rejects become comments. */
function planServer(server: Record<string, unknown>, serverAt: string[], known: readonly string[], plan: Plan): void {
  if ('transport' in server) {
    if (!('type' in server)) {
      plan.ops.push({ op: 'rename', path: [...serverAt, 'transport'], to: 'type' });
      plan.changes.push({ path: formatJsonPath(serverAt), message: '"transport" renamed to "type"' });
    } else if (server.type === server.transport) {
      plan.ops.push({ op: 'remove', path: [...serverAt, 'transport'] });
      plan.changes.push({ path: formatJsonPath(serverAt), message: `removed "transport" (the same as "type": ${JSON.stringify(server.type)})` });
    }
    // Different values: left alone, the loader reports the conflict and the user decides.
  }
  commentUnknownKeys(server, serverAt, known, plan);
}

/** Where a parked toolbox (in the top-level object) or server (in its toolbox's object) is kept. */
const PARKED_KEY = { toolbox: '_parkedToolboxes', server: '_parkedServers' } as const;

/**
 * A toolbox or server whose name starts with `$` or `_` is how users comment an entry out in JSON. Such a name was
 * never a valid one, and renaming it to the closest valid name would turn a switched-off entry into a live one. It is
 * moved, as written, under `_parkedToolboxes` (top level) or `_parkedServers` (its toolbox): comment keys, which the
 * workbench ignores. `at` is the path of `entries` (in `owner`); `shown`, the owner's path as it will be named after
 * renames. Returns the names parked.
 */
function park(owner: Record<string, unknown>, at: string[], entries: Record<string, unknown>, shown: string[], plan: Plan): Set<string> {
  const names = Object.keys(entries).filter((name) => /^[$_]/.test(name));
  if (names.length === 0) return new Set();
  const kind = shown.length === 0 ? 'toolbox' : 'server';
  let key: string = PARKED_KEY[kind];
  if (owner[key] !== undefined && !isRecord(owner[key])) key = uniqueName(key, new Set(Object.keys(owner)));
  const into = owner[key];
  const taken = new Set(isRecord(into) ? Object.keys(into) : []);
  const where = formatJsonPath([...shown, key]);
  const moved: [string, unknown][] = [];
  for (const name of names) {
    const parkedAs = uniqueName(name, taken);
    taken.add(parkedAs);
    moved.push([parkedAs, entries[name]]);
    plan.ops.push({ op: 'remove', path: [...at, name] });
    const what = kind === 'toolbox' ? `toolbox "${name}"` : `server "${name}" of toolbox "${at[1]}"`;
    plan.changes.push({ path: formatJsonPath([...at, name]), message: `${what} moved to ${where}${parkedAs === name ? '' : ` as "${parkedAs}"`}` });
    plan.notes.push(
      `${what} stays parked under "${where}": a name starting with "$" or "_" comments an entry out (it is never a ${kind}'s name), so it is kept there and not served; to use it, move it into "${formatJsonPath([...shown, at[at.length - 1]!])}" under a valid name`,
    );
  }
  const ownerAt = at.slice(0, -1);
  plan.ops.push(isRecord(into) ? { op: 'insert', path: [...ownerAt, key], entries: moved } : { op: 'insert', path: ownerAt, entries: [[key, Object.fromEntries(moved)]] });
  return new Set(names);
}

/** Keys 0.9 ignored and 0.10 rejects become `_key` comments, with a hint when a known key is close. */
function commentUnknownKeys(object: Record<string, unknown>, at: string[], known: readonly string[], plan: Plan): void {
  const taken = new Set(Object.keys(object));
  for (const key of Object.keys(object)) {
    if (known.includes(key) || /^[$_]/.test(key) || key === 'toolMode') continue;
    const comment = uniqueName(`_${key}`, taken);
    taken.add(comment);
    plan.ops.push({ op: 'rename', path: [...at, key], to: comment });
    const close = known.find((k) => editDistance(k.toLowerCase(), key.toLowerCase()) <= 2);
    const hint = close ? ` If it was meant to be "${close}", rename it to that.` : '';
    plan.changes.push({
      path: formatJsonPath([...at, key]),
      message: `"${key}" is not a workbench key (0.9 ignored it, 0.10 rejects it): kept as the comment key "${comment}".${hint}`,
    });
  }
}

/** Renames names that break the rule to the closest valid, unused name; returns old → new. */
function validNames(names: readonly string[], kind: 'toolbox' | 'server', at: string[], plan: Plan): Map<string, string> {
  const renamed = new Map<string, string>();
  const taken = new Set(names.filter((n) => NAME_PATTERN.test(n)));
  for (const name of names) {
    if (NAME_PATTERN.test(name)) continue;
    const valid = uniqueName(sanitizeName(name, kind), taken);
    taken.add(valid);
    renamed.set(name, valid);
    plan.ops.push({ op: 'rename', path: [...at, name], to: valid });
    plan.changes.push({ path: formatJsonPath([...at, name]), message: `${kind} "${name}" renamed to "${valid}" (${NAME_RULE})` });
  }
  return renamed;
}

import { readFileSync } from 'node:fs';
import { constants, copyFile, open, readFile, unlink } from 'node:fs/promises';
import writeFileAtomic from 'write-file-atomic';
import { WorkbenchError } from '../errors.js';
import { expandString, formatJsonPath } from '../config/expand-env.js';
import { CLIENT_LABELS, sanitizeName, uniqueName, type ImportedServers } from './import-client.js';
import { formattingOf, indentUnit, insertMember, removeMember, renameKey } from './json-edit.js';
import { parseConfig, parseConfigJson } from '../config/load.js';
import type { WorkbenchConfig } from '../config/types.js';
import { NAME_PATTERN, NAME_RULE, editDistance, isRecord } from '../config/text.js';

/**
 * `migrate`: turning a 0.9 config into a 0.10 one, and adding servers imported from another client's config. Every
 * result is checked with {@link parseConfig} (with every variable it uses set, so a variable missing from this shell
 * is not a failure) before it is offered; the file is edited in place, so its formatting, comment keys and key
 * order survive and the diff shows only what changed.
 *
 * What 0.9 configs had that 0.10 does not accept (from the 0.9 README, loader and types):
 * - top-level `"toolMode": "dynamic" | "proxy"` (dynamic was the default) → removed;
 * - `"transport"` on a server → renamed to `"type"` (0.10 still accepts the alias; `type` is what clients use);
 * - unknown keys, which 0.9 ignored and 0.10 rejects → kept as `_`-prefixed comment keys, so nothing is lost;
 * - toolbox and server names outside the 0.10 name rule → renamed to the closest valid name.
 */

/** One change made to the document, at a formatted JSON path. */
export interface ConfigChange {
  path: string;
  message: string;
}

export interface ConfigVariables {
  /** `${VAR}` references without a default, in order of first use. */
  required: string[];
  /** Variables only used as `${VAR:-default}`. */
  optional: string[];
  /** What a variable is for, when the import knows (e.g. which VS Code input it replaces). */
  about: Record<string, string>;
}

export interface ConfigEdit {
  /** The file's text before (empty for a new file) and after. */
  before: string;
  after: string;
  changes: ConfigChange[];
  /** What the user should know or do (what dynamic mode's removal means, variables to set, dropped keys, …). */
  notes: string[];
  variables: ConfigVariables;
  /** The result as the workbench will load it (with placeholder values for unset variables). */
  config: WorkbenchConfig;
}

/**
 * Migrates the text of a config file. `changes` is empty (and `after === before`) when it is already a 0.10 config.
 *
 * @throws WorkbenchError `CONFIG_PARSE` when the text is not JSON; `CONFIG_INVALID` (the loader's message and
 *   details) when problems remain that cannot be fixed mechanically — nothing should be written then.
 */
export function migrateConfigText(text: string, source: string): ConfigEdit {
  const document = parseConfigJson(text, source);
  const plan = planMigration(document);
  if (plan.changes.length === 0) plan.notes.push(DEFAULT_MODE_NOTE);
  return finish(text, document, plan, source);
}

export interface ImportTarget {
  toolbox: string;
  description?: string;
  /** Add to an existing toolbox of that name instead of refusing (existing servers are never replaced). */
  merge?: boolean;
  /** `$schema` for a new file. */
  schema?: string;
  /** Where the servers came from, for the change list. */
  from: string;
}

/**
 * Adds imported servers as a toolbox to the config text `text` (migrating it too, if it is a 0.9 config), or to a
 * new config when `text` is undefined.
 *
 * @throws WorkbenchError `USAGE` when the toolbox exists and `merge` is not set; `CONFIG_PARSE`/`CONFIG_INVALID` as
 *   {@link migrateConfigText}, also when the existing file has no usable `toolboxes` object.
 */
export function importIntoConfigText(text: string | undefined, source: string, imported: ImportedServers, target: ImportTarget): ConfigEdit {
  const label = CLIENT_LABELS[imported.client];
  const description = target.description ?? `Imported from ${label} (${target.from})`;
  const toolboxValue = { description, mcpServers: Object.fromEntries(imported.servers) };
  const serverList = imported.servers.map(([name]) => name).join(', ');
  const about = Object.fromEntries(imported.variables.map((v) => [v.name, v.reason]));

  if (text === undefined) {
    const document = { ...(target.schema !== undefined && { $schema: target.schema }), toolboxes: { [target.toolbox]: toolboxValue } };
    const plan: Plan = {
      ops: [],
      changes: [{ path: `toolboxes.${target.toolbox}`, message: `new toolbox with ${imported.servers.length} server(s) from ${label}: ${serverList}` }],
      notes: [...imported.notes],
    };
    if (target.schema !== undefined) plan.notes.push(`"$schema" points to ${target.schema}, so editors can complete and check the file`);
    return finish('', document, plan, source, `${JSON.stringify(document, null, 2)}\n`, about);
  }

  const document = parseConfigJson(text, source);
  const plan = planMigration(document);
  plan.notes.push(...imported.notes);
  if (!isRecord(document)) return finish(text, document, plan, source); // the loader explains what is wrong
  const toolboxes = document.toolboxes;
  const toolboxPath = ['toolboxes', target.toolbox];
  const intoExisting = isRecord(toolboxes) && toolboxes[target.toolbox] !== undefined;
  if (toolboxes === undefined) {
    plan.ops.push({ op: 'insert', path: [], entries: [['toolboxes', { [target.toolbox]: toolboxValue }]] });
  } else if (!isRecord(toolboxes)) {
    throw new WorkbenchError('CONFIG_INVALID', `${source}: "toolboxes" is not an object, so no toolbox can be added to it.`);
  } else if (toolboxes[target.toolbox] === undefined) {
    plan.ops.push({ op: 'insert', path: ['toolboxes'], entries: [[target.toolbox, toolboxValue]] });
  } else if (!target.merge) {
    throw new WorkbenchError(
      'USAGE',
      `${source} already has a toolbox "${target.toolbox}". Choose another name with --toolbox, or add --merge to add the imported servers to it (existing servers are never replaced).`,
    );
  } else {
    const existing = toolboxes[target.toolbox];
    const servers = isRecord(existing) ? existing.mcpServers : undefined;
    if (!isRecord(servers)) throw new WorkbenchError('CONFIG_INVALID', `${source}: toolbox "${target.toolbox}" has no "mcpServers" object to merge into.`);
    const entries: [string, unknown][] = [];
    for (const [name, entry] of imported.servers) {
      if (servers[name] === undefined) entries.push([name, entry]);
      else if (JSON.stringify(servers[name]) === JSON.stringify(entry)) plan.notes.push(`server "${name}" is already in toolbox "${target.toolbox}" with the same settings`);
      else plan.notes.push(`server "${name}" already exists in toolbox "${target.toolbox}" with other settings; the existing entry was kept and the imported one skipped`);
    }
    if (entries.length > 0) plan.ops.push({ op: 'insert', path: [...toolboxPath, 'mcpServers'], entries });
    imported = { ...imported, servers: imported.servers.filter(([name]) => entries.some(([added]) => added === name)) };
  }
  if (imported.servers.length > 0) {
    plan.changes.push({
      path: formatJsonPath(toolboxPath),
      message: `${intoExisting ? 'added' : 'new toolbox with'} ${imported.servers.length} server(s) from ${label}: ${imported.servers.map(([n]) => n).join(', ')}`,
    });
  }
  return finish(text, document, plan, source, undefined, about);
}

/**
 * The variables a config document uses in the places the workbench expands (`command`, `args`, `env` values,
 * `cwd`, `url`, `headers` values of every server).
 */
export function configVariables(document: unknown): ConfigVariables {
  const required: string[] = [];
  const optional: string[] = [];
  for (const { value } of expandableStrings(document)) {
    for (const name of expandString(value, {}).missing) if (!required.includes(name)) required.push(name);
    for (const match of value.matchAll(/\$\{([A-Za-z_][A-Za-z0-9_]*):-/g)) if (!optional.includes(match[1]!)) optional.push(match[1]!);
  }
  return { required, optional: optional.filter((name) => !required.includes(name)), about: {} };
}

// ---------------------------------------------------------------------------------------------------------------
// Planning: what to change, as operations on paths of the original document.

type Op =
  | { op: 'rename'; path: string[]; to: string }
  | { op: 'remove'; path: string[] }
  | { op: 'insert'; path: string[]; entries: [string, unknown][] };

interface Plan {
  ops: Op[];
  changes: ConfigChange[];
  notes: string[];
}

const DYNAMIC_NOTE =
  'Dynamic mode was removed in 0.10.0. The workbench no longer registers downstream tools on itself, so clients ' +
  'do not see tools such as dev__memory__read_graph in their tool list any more. They call open_toolbox ' +
  '{ "toolbox_name": "dev" } to connect a toolbox and list its tools, then use_tool { "toolbox_name": "dev", ' +
  '"tool_name": "dev__memory__read_graph", "arguments": { … } } to call one. Canonical names are unchanged.';

const META_TOOL_NOTE = "0.9's workbench_open_toolbox and workbench_use_tool are now called open_toolbox and use_tool.";

const DEFAULT_MODE_NOTE =
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

function planMigration(document: unknown): Plan {
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
  const toolboxNames = validNames(Object.keys(toolboxes), 'toolbox', ['toolboxes'], plan);
  for (const [name, toolbox] of Object.entries(toolboxes)) {
    if (!isRecord(toolbox)) continue;
    const at = ['toolboxes', name];
    const renamed = toolboxNames.get(name);
    if (renamed !== undefined) {
      plan.notes.push(`tools of toolbox "${name}" are now named ${renamed}__{server}__{tool}; update state-file entries or --disabled-tools patterns that used the old name`);
    }
    commentUnknownKeys(toolbox, at, schema.toolbox, plan);
    const servers = toolbox.mcpServers;
    if (!isRecord(servers)) continue;
    validNames(Object.keys(servers), 'server', [...at, 'mcpServers'], plan);
    for (const [serverName, server] of Object.entries(servers)) {
      if (!isRecord(server)) continue;
      const serverAt = [...at, 'mcpServers', serverName];
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
      commentUnknownKeys(server, serverAt, schema.server, plan);
    }
  }
  return plan;
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

// ---------------------------------------------------------------------------------------------------------------
// Applying a plan and checking the result.

function finish(text: string, document: unknown, plan: Plan, source: string, fresh?: string, about: Record<string, string> = {}): ConfigEdit {
  const after = fresh ?? applyPlan(text, document, plan.ops);
  const result = fresh === undefined ? parseConfigJson(after, source) : document;
  const config = checkConfig(result, source);
  const variables = configVariables(result);
  for (const [name, why] of Object.entries(about)) if (variables.required.includes(name) || variables.optional.includes(name)) variables.about[name] = why;
  return { before: text, after, changes: plan.changes, notes: [...new Set(plan.notes)], variables, config };
}

/**
 * Applies the plan to the text, keeping everything else byte for byte. Falls back to re-serialising the edited
 * document (same key order, the file's indentation) when the text cannot be edited safely (duplicate keys).
 */
function applyPlan(text: string, document: unknown, ops: readonly Op[]): string {
  if (ops.length === 0) return text;
  const bom = text.startsWith('\uFEFF') ? '\uFEFF' : '';
  let body = bom ? text.slice(1) : text;
  const formatting = formattingOf(body);
  const expected = applyToValue(document, ops);
  // Deepest first, so no path runs through a key renamed before it; an insert into an object precedes its rename.
  const depth = (op: Op): number => op.path.length + (op.op === 'insert' ? 1 : 0);
  for (const op of [...ops].sort((a, b) => depth(b) - depth(a))) {
    if (op.op === 'rename') body = renameKey(body, op.path, op.to);
    else if (op.op === 'remove') body = removeMember(body, op.path);
    else for (const [key, value] of op.entries) body = insertMember(body, op.path, key, value, formatting);
  }
  // The text edit must give exactly the document the plan describes (keys in the same order too).
  if (sameJson(body, expected)) return bom + body;
  const original = bom ? text.slice(1) : text;
  return `${bom}${JSON.stringify(expected, null, indentUnit(formatting))}${original.endsWith('\n') ? '\n' : ''}`;
}

function sameJson(text: string, expected: unknown): boolean {
  try {
    return JSON.stringify(JSON.parse(text)) === JSON.stringify(expected);
  } catch {
    return false;
  }
}

/** The plan applied to a copy of the document: deepest paths first, so renames of parents come after. */
function applyToValue(document: unknown, ops: readonly Op[]): unknown {
  const copy = structuredClone(document);
  const sorted = [...ops].sort((a, b) => b.path.length - a.path.length);
  for (const op of sorted) {
    const parentPath = op.op === 'insert' ? op.path : op.path.slice(0, -1);
    let parent: unknown = copy;
    for (const key of parentPath) parent = isRecord(parent) ? parent[key] : undefined;
    if (!isRecord(parent)) continue;
    if (op.op === 'insert') {
      for (const [key, value] of op.entries) parent[key] = value;
      continue;
    }
    const key = op.path[op.path.length - 1]!;
    const entries = Object.entries(parent);
    for (const k of Object.keys(parent)) delete parent[k];
    for (const [k, v] of entries) {
      if (k !== key) parent[k] = v;
      else if (op.op === 'rename') parent[op.to] = v;
    }
  }
  return copy;
}

/**
 * Validates exactly as the loader does, with every variable the document needs set to a placeholder: a variable
 * missing from this shell is reported to the user, not treated as a broken config.
 */
function checkConfig(document: unknown, source: string): WorkbenchConfig {
  const env: Record<string, string> = {};
  for (const { value, key } of expandableStrings(document)) {
    for (const name of expandString(value, env).missing) {
      // A URL made from a variable must still parse as one.
      env[name] = key === 'url' && value.startsWith(`\${${name}`) ? 'http://placeholder.invalid' : 'placeholder';
    }
  }
  return parseConfig(document, source, env);
}

/** Every string the workbench expands, with the key it sits under (`command`, `args`, `env`, `cwd`, `url`, `headers`). */
function* expandableStrings(document: unknown): Generator<{ key: string; value: string }> {
  const toolboxes = isRecord(document) ? document.toolboxes : undefined;
  if (!isRecord(toolboxes)) return;
  for (const toolbox of Object.values(toolboxes)) {
    const servers = isRecord(toolbox) ? toolbox.mcpServers : undefined;
    if (!isRecord(servers)) continue;
    for (const server of Object.values(servers)) {
      if (!isRecord(server)) continue;
      for (const [key, value] of Object.entries(server)) {
        if ((key === 'command' || key === 'cwd' || key === 'url') && typeof value === 'string') yield { key, value };
        else if (key === 'args' && Array.isArray(value)) {
          for (const arg of value) if (typeof arg === 'string') yield { key, value: arg };
        } else if ((key === 'env' || key === 'headers') && isRecord(value)) {
          for (const item of Object.values(value)) if (typeof item === 'string') yield { key, value: item };
        }
      }
    }
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Files.

export interface ConfigFile {
  bytes: Buffer;
  text: string;
}

/**
 * Reads a config file for editing; undefined when it does not exist.
 *
 * @throws WorkbenchError `CONFIG_UNREADABLE` when it exists but cannot be read.
 */
export async function readConfigFile(path: string): Promise<ConfigFile | undefined> {
  try {
    const bytes = await readFile(path);
    return { bytes, text: bytes.toString('utf8') };
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return undefined;
    const reason = code === 'EISDIR' ? 'it is a directory, not a file' : code === 'EACCES' ? 'permission denied' : (error as Error).message;
    throw new WorkbenchError('CONFIG_UNREADABLE', `Cannot read ${path}: ${reason}.`, { cause: error });
  }
}

/**
 * Saves `text` to `path` atomically (write-file-atomic: temp file beside it, fsync, rename; the new file keeps the
 * old one's mode and owner). When `original` is given the file must still hold exactly those bytes (else nothing is
 * written: someone edited it meanwhile); they are first copied to `<path>.bak-<timestamp>` (a new name, never an
 * existing backup). Without `original` the file must not exist yet; it is created, never overwritten.
 *
 * @returns the backup's path, when one was made.
 * @throws WorkbenchError `CONFIG_UNWRITABLE` (the file changed, appeared, or cannot be written — with the reason).
 */
export async function saveConfigFile(path: string, text: string, original: Buffer | undefined, now = new Date()): Promise<{ backup?: string }> {
  const fail = (reason: string, cause?: unknown): never => {
    throw new WorkbenchError('CONFIG_UNWRITABLE', `Did not write ${path}: ${reason}.`, { cause });
  };
  let backup: string | undefined;
  if (original) {
    const current = await readFile(path).catch((error: unknown) => fail('it can no longer be read', error));
    if (!current.equals(original)) fail('it changed while migrate was running; run migrate again');
    backup = await makeBackup(path, now).catch((error: unknown) => fail(`the backup could not be made (${(error as Error).message})`, error));
  } else {
    // Claim the name first: an exclusive create fails if the file appeared meanwhile, where a rename would replace it.
    await open(path, 'wx').then(
      (handle) => handle.close(),
      (error: unknown) => {
        const exists = (error as NodeJS.ErrnoException).code === 'EEXIST';
        fail(exists ? 'the file was created by someone else meanwhile' : (error as Error).message, error);
      },
    );
  }
  try {
    await writeFileAtomic(path, text);
  } catch (error) {
    if (!original) await unlink(path).catch(() => {}); // our own empty claim, never someone else's file
    fail((error as Error).message, error);
  }
  return backup === undefined ? {} : { backup };
}

/** `<path>.bak-20250102T030405Z`, or with `-2`, `-3`, … when that name exists: a backup never replaces another. */
async function makeBackup(path: string, now: Date): Promise<string> {
  const stamp = now.toISOString().replace(/[-:]/g, '').replace(/\.\d+Z$/, 'Z');
  for (let n = 1; ; n++) {
    const candidate = `${path}.bak-${stamp}${n === 1 ? '' : `-${n}`}`;
    try {
      await copyFile(path, candidate, constants.COPYFILE_EXCL);
      return candidate;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST' || n >= 1000) throw error;
    }
  }
}

// ---------------------------------------------------------------------------------------------------------------



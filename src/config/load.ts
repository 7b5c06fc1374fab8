import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import { WorkbenchError } from '../errors.js';
import { NAME_RULE, editDistance, isRecord } from './text.js';
import { headerSecrets, urlCredentials, urlSecrets, type Secret } from '../shared/redact.js';
import { expandConfigEnv, formatJsonPath, type EnvLike, type JsonPath } from './expand-env.js';
import { duplicateKeyMessage, parseJsonDocument } from './parse-json.js';
import type { ServerConfig, ToolboxConfig, WorkbenchConfig } from './types.js';
import { clashMessage, normaliseOverrides, normaliseToolsets, toolsetNameClashes, type RawToolOverride, type RawToolset } from './catalog-settings.js';

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
 * Reads, parses, validates, env-expands and normalises the config file at `path`, which should be absolute (as
 * returned by {@link resolveConfigPath}); it becomes `source` of the result as given.
 *
 * @throws WorkbenchError
 *   - `CONFIG_NOT_FOUND` when the file does not exist (the message says how to create or point to one);
 *   - `CONFIG_UNREADABLE` when it exists but cannot be read (permissions, a directory, …), with the reason;
 *   - `CONFIG_PARSE` when it is not JSON, with line, column and the offending line;
 *   - anything {@link parseConfig} throws.
 */
export async function loadConfig(path: string, env: EnvLike): Promise<WorkbenchConfig> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    throw readError(path, error);
  }
  const document = parseJsonDocument(text, path);
  return parseConfig(document.value, path, env, { duplicateKeys: document.duplicateKeys });
}

/**
 * Parses config file text as JSON (a leading byte-order mark is ignored). Exposed for callers that edit the raw
 * document, such as `migrate`.
 *
 * @throws WorkbenchError `CONFIG_PARSE` with the reason, line and column, and an excerpt of the offending line
 *   with a caret; hints are added for comments, trailing commas and single quotes.
 */
export function parseConfigJson(text: string, source: string): unknown {
  return parseJsonDocument(text, source).value;
}

/**
 * Validates and normalises an already parsed config document: rejects `toolMode: "dynamic"`, checks the document
 * against workbench-config.schema.json and the rules a schema cannot express, expands `${VAR}` /
 * `${VAR:-default}` from `env`, and returns the normalised {@link WorkbenchConfig} (toolboxes and servers in
 * document order, every default applied, `warnings` for deprecations and literal `${`). `raw` is not modified.
 *
 * @throws WorkbenchError
 *   - `CONFIG_DYNAMIC_MODE` for `toolMode: "dynamic"` (removed in 0.10.0), pointing to `migrate` and MIGRATION.md;
 *   - `CONFIG_INVALID` listing every violation at once in `details`, each as `<path>: <problem>`;
 *   - `ENV_MISSING` listing every unset variable without a default, with its path.
 *   No message ever contains an expanded value.
 */
export function parseConfig(raw: unknown, source: string, env: EnvLike, options: ParseConfigOptions = {}): WorkbenchConfig {
  if (isRecord(raw) && raw.toolMode === 'dynamic') throw dynamicModeError(source);

  const duplicates = (options.duplicateKeys ?? []).map((path): Problem => ({ path, message: duplicateKeyMessage() }));
  const problems: Problem[] = duplicates.length > 0 ? inDocumentOrder([...duplicates, ...findProblems(raw)], raw) : findProblems(raw);
  if (isRecord(raw) && isRecord(raw.toolboxes)) {
    for (const name of toolsetNameClashes(raw.toolsets, new Set(Object.keys(raw.toolboxes)))) {
      problems.push({ path: ['toolsets', name], message: clashMessage(name, '') });
    }
  }
  if (problems.length > 0) throw invalidError(source, problems);

  const warnings: string[] = [];
  if (isRecord(raw) && raw.toolMode === 'proxy') {
    warnings.push(
      `"toolMode": "proxy" in ${source} is deprecated and has no effect: the workbench is always proxy-only ` +
        'since 0.10.0. Remove the key.',
    );
  }

  const expanded = expandConfigEnv(raw, env, { source });
  warnings.push(...expanded.warnings);
  // Validation succeeded on the same shape (expansion only replaces strings with strings).
  const document = expanded.config as RawConfig;

  const afterExpansion = findExpandedProblems(document);
  if (afterExpansion.length > 0) throw invalidError(source, afterExpansion);

  const toolboxes = Object.entries(document.toolboxes).map(([name, toolbox]) => normaliseToolbox(name, toolbox));
  if (toolboxes.length === 0) warnings.push(`${source} defines no toolboxes; the workbench will have nothing to open.`);
  for (const toolbox of toolboxes) {
    if (toolbox.servers.length === 0) warnings.push(`Toolbox "${toolbox.name}" has no servers.`);
  }
  warnings.push(...credentialWarnings(toolboxes));
  return {
    source,
    toolboxes,
    ...(document.toolsets && { toolsets: normaliseToolsets(document.toolsets, 'config') }),
    ...(document.catalogBudget !== undefined && { catalogBudget: document.catalogBudget }),
    warnings,
    secrets: [...expanded.secrets, ...configuredSecrets(toolboxes)],
  };
}

export interface ParseConfigOptions {
  /** Keys written twice in the document (from {@link parseJsonDocument}); each is reported as a problem. */
  duplicateKeys?: readonly JsonPath[];
}

/** What every remote entry holds that output must never show: URL credentials and header values. */
function configuredSecrets(toolboxes: readonly ToolboxConfig[]): Secret[] {
  const secrets: Secret[] = [];
  for (const server of toolboxes.flatMap((t) => t.servers)) {
    if (server.type === 'stdio') continue;
    secrets.push(...urlSecrets(server.url));
    for (const [name, value] of Object.entries(server.headers)) secrets.push(...headerSecrets(name, value));
  }
  return secrets;
}

/** A warning per URL that carries credentials (user info, secret-looking query parameters); never their values. */
function credentialWarnings(toolboxes: readonly ToolboxConfig[]): string[] {
  const warnings: string[] = [];
  for (const toolbox of toolboxes) {
    for (const server of toolbox.servers) {
      if (server.type === 'stdio') continue;
      const found = urlCredentials(server.url);
      const what = [
        ...(found.userInfo ? ['user info (user:password@)'] : []),
        ...found.params.map((name) => `query parameter ${JSON.stringify(name)}`),
      ];
      if (what.length === 0) continue;
      warnings.push(
        `${formatJsonPath(['toolboxes', toolbox.name, 'mcpServers', server.name, 'url'])}: the URL carries credentials ` +
          `(${what.join(', ')}). URLs end up in logs, proxies and error messages; put the credential in "headers" ` +
          'with ${VAR} instead, e.g. "headers": { "Authorization": "Bearer ${API_TOKEN}" }. The workbench hides it in ' +
          'its own output, but the server and anything between may not.',
      );
    }
  }
  return warnings;
}

// ---------------------------------------------------------------------------------------------------------------
// Shapes of the document after schema validation.

interface RawServer {
  type?: 'stdio' | 'http' | 'sse';
  transport?: 'stdio' | 'http' | 'sse';
  command?: string;
  args?: string[];
  env?: Record<string, string>;
  cwd?: string;
  inheritEnv?: boolean;
  url?: string;
  headers?: Record<string, string>;
  toolFilters?: string[];
  disabledTools?: string[];
  timeoutMs?: number;
  connectTimeoutMs?: number;
  toolOverrides?: Record<string, RawToolOverride>;
  shared?: boolean;
}

interface RawToolbox {
  description?: string;
  mcpServers: Record<string, RawServer>;
  disabledTools?: string[];
  toolOverrides?: Record<string, RawToolOverride>;
  catalogBudget?: number;
}

interface RawConfig {
  toolboxes: Record<string, RawToolbox>;
  toolsets?: Record<string, RawToolset>;
  catalogBudget?: number;
}

function normaliseToolbox(name: string, raw: RawToolbox): ToolboxConfig {
  return {
    name,
    description: raw.description ?? '',
    disabledTools: [...(raw.disabledTools ?? [])],
    ...(raw.toolOverrides && { toolOverrides: normaliseOverrides(raw.toolOverrides) }),
    ...(raw.catalogBudget !== undefined && { catalogBudget: raw.catalogBudget }),
    servers: Object.entries(raw.mcpServers).map(([serverName, server]) => normaliseServer(serverName, server)),
  };
}

function normaliseServer(name: string, raw: RawServer): ServerConfig {
  const common = {
    name,
    disabledTools: [...(raw.disabledTools ?? [])],
    ...(raw.toolOverrides && { toolOverrides: normaliseOverrides(raw.toolOverrides) }),
    ...(raw.toolFilters !== undefined && { toolFilters: [...raw.toolFilters] }),
    ...(raw.timeoutMs !== undefined && { timeoutMs: raw.timeoutMs }),
    ...(raw.connectTimeoutMs !== undefined && { connectTimeoutMs: raw.connectTimeoutMs }),
    shared: raw.shared ?? false,
  };
  const type = raw.type ?? raw.transport ?? 'stdio';
  if (type === 'stdio') {
    return {
      ...common,
      type,
      // The schema's oneOf guarantees a command for stdio servers.
      command: raw.command ?? '',
      args: [...(raw.args ?? [])],
      env: { ...raw.env },
      ...(raw.cwd !== undefined && { cwd: raw.cwd }),
      inheritEnv: raw.inheritEnv ?? false,
    };
  }
  return { ...common, type, url: raw.url ?? '', headers: { ...raw.headers } };
}

// ---------------------------------------------------------------------------------------------------------------
// Validation.

interface Problem {
  path: JsonPath;
  message: string;
  /** Where the problem sits in the document, when that is not `path` (an unknown key sorts where the key is). */
  at?: JsonPath;
  /** About the object as a whole (its form): listed after the problems of its keys, which often explain it. */
  whole?: boolean;
}

interface CompiledSchema {
  validate: ValidateFunction;
  /** Allowed keys per object level, read from the schema so suggestions never drift from it. */
  keys: Record<Level, readonly string[]>;
}

type Level = 'top' | 'toolbox' | 'server' | 'toolset' | 'override';

let compiledSchema: CompiledSchema | undefined;

/** Compiled once per process, on first use: start-up of commands that never load a config stays cheap. */
function schema(): CompiledSchema {
  if (compiledSchema) return compiledSchema;
  // From src/config (tsx) and dist/config (built) alike, the schema sits two levels up, at the package root.
  const url = new URL('../../workbench-config.schema.json', import.meta.url);
  const document = JSON.parse(readFileSync(url, 'utf8')) as {
    properties: Record<string, unknown>;
    definitions: Record<'toolbox' | 'server' | 'toolset' | 'toolOverride', { properties: Record<string, unknown> }>;
  };
  const ajv = new Ajv({ allErrors: true });
  compiledSchema = {
    validate: ajv.compile(document),
    keys: {
      top: Object.keys(document.properties),
      toolbox: Object.keys(document.definitions.toolbox.properties),
      server: Object.keys(document.definitions.server.properties),
      toolset: Object.keys(document.definitions.toolset.properties),
      override: Object.keys(document.definitions.toolOverride.properties),
    },
  };
  return compiledSchema;
}

/** Every schema violation plus the checks JSON Schema cannot express, in document order, without duplicates. */
function findProblems(raw: unknown): Problem[] {
  const { validate, keys } = schema();
  const problems: Problem[] = [];
  const serversFailingShape = new Set<string>();
  const typeErrorAt = new Set<string>();

  if (!validate(raw)) {
    const errors = validate.errors ?? [];
    for (const error of errors) {
      if (error.keyword === 'type') typeErrorAt.add(error.instancePath);
    }
    for (const error of errors) {
      // propertyNames reports each bad name twice (the inner pattern error carries `propertyName`); keep the outer.
      if (error.propertyName !== undefined) continue;
      const path = pointerToPath(error.instancePath, raw);
      // A server's stdio/remote oneOf: both branches' errors are replaced by one message about the server's shape.
      if (error.schemaPath.startsWith('#/oneOf')) {
        if (error.keyword === 'oneOf') serversFailingShape.add(error.instancePath);
        continue;
      }
      // Once a value has the wrong type, its other errors (oneOf, missing keys) are noise.
      if (error.keyword !== 'type' && typeErrorAt.has(error.instancePath)) continue;
      const at = error.keyword === 'additionalProperties' ? [...path, String(error.params.additionalProperty)] : undefined;
      problems.push({ path: problemPath(error, path), message: describeError(error, path, raw, keys), ...(at && { at }) });
    }
  }

  for (const path of serverPaths(raw)) {
    const server = valueAt(raw, path);
    if (!isRecord(server)) continue;
    const conflict = typeConflict(server);
    if (conflict) problems.push({ path, message: conflict, whole: true });
    const pointer = pathToPointer(path);
    if (serversFailingShape.has(pointer) && !conflict && !typeErrorAt.has(pointer)) {
      const message = describeServerShape(server);
      if (message) problems.push({ path, message, whole: true });
    }
  }

  return inDocumentOrder(dedupe(problems), raw);
}

/** Checks that only make sense on expanded values. Values are never quoted: they may hold secrets. */
function findExpandedProblems(document: RawConfig): Problem[] {
  const problems: Problem[] = [];
  for (const [toolboxName, toolbox] of Object.entries(document.toolboxes)) {
    for (const [serverName, server] of Object.entries(toolbox.mcpServers)) {
      const at = ['toolboxes', toolboxName, 'mcpServers', serverName];
      for (const key of ['command', 'cwd'] as const) {
        if (server[key] === '') {
          problems.push({ path: [...at, key], message: 'is empty after expanding environment variables' });
        }
      }
      if (server.url !== undefined && !isHttpUrl(server.url)) {
        problems.push({
          path: [...at, 'url'],
          message: 'must be an absolute http:// or https:// URL (checked after expanding environment variables)',
        });
      }
    }
  }
  return problems;
}

function isHttpUrl(text: string): boolean {
  try {
    const url = new URL(text);
    return url.protocol === 'http:' || url.protocol === 'https:';
  } catch {
    return false;
  }
}

function describeError(error: ErrorObject, path: JsonPath, raw: unknown, keys: Record<Level, readonly string[]>): string {
  const params = error.params as Record<string, unknown>;
  const last = path[path.length - 1];
  switch (error.keyword) {
    case 'additionalProperties': {
      const key = String(params.additionalProperty);
      return unknownKeyMessage(key, levelOf(path), keys);
    }
    case 'required':
      return `missing required key "${String(params.missingProperty)}"`;
    case 'propertyNames': {
      const name = String(params.propertyName);
      const holder = path[path.length - 1];
      const kind = holder === 'toolboxes' ? 'toolbox' : holder === 'toolsets' ? 'toolset' : 'server';
      return nameMessage(kind, name);
    }
    case 'type':
      return typeMessage(String(params.type), path, valueAt(raw, path));
    case 'minimum':
      return last === 'timeoutMs' || last === 'connectTimeoutMs'
        ? 'must be a positive integer (milliseconds)'
        : `must be ${String(params.comparison)} ${String(params.limit)}`;
    case 'minLength':
      return 'must not be empty';
    case 'enum': {
      const allowed = (params.allowedValues as unknown[]).map((v) => JSON.stringify(v));
      const got = JSON.stringify(valueAt(raw, path));
      if (last === 'toolMode') {
        return `unknown value ${got}; the workbench is proxy-only since 0.10.0, so remove "toolMode"`;
      }
      return `must be one of ${allowed.join(', ')} (got ${got === undefined ? 'nothing' : truncate(got, 40)})`;
    }
    default:
      return error.message ?? `fails "${error.keyword}"`;
  }
}

/** Unknown keys and missing keys are reported on the object that holds them; a bad name on the entry itself. */
function problemPath(error: ErrorObject, path: JsonPath): JsonPath {
  if (error.keyword === 'propertyNames') return [...path, String((error.params as { propertyName: unknown }).propertyName)];
  return path;
}

function typeMessage(expected: string, path: JsonPath, value: unknown): string {
  const last = path[path.length - 1];
  if (last === 'timeoutMs' || last === 'connectTimeoutMs') return 'must be a positive integer (milliseconds)';
  if (expected === 'string' && (typeof value === 'number' || typeof value === 'boolean')) {
    return `must be a string; write it in quotes: "${String(value)}"`;
  }
  const inside = path[path.length - 2];
  const what: Record<string, string> = {
    string: 'a string',
    object: 'an object',
    array: 'an array',
    boolean: 'true or false',
    integer: 'an integer',
    number: 'a number',
    null: 'null',
  };
  const described = what[expected] ?? expected;
  if (expected === 'array' && (last === 'args' || last === 'toolFilters' || last === 'disabledTools')) {
    return `must be an array of strings`;
  }
  if (expected === 'object' && typeof inside === 'string' && (inside === 'toolboxes' || inside === 'mcpServers')) {
    return `must be an object (a ${inside === 'toolboxes' ? 'toolbox' : 'server'} definition)`;
  }
  return `must be ${described}`;
}

function nameMessage(kind: 'toolbox' | 'server' | 'toolset', name: string): string {
  const reasons: string[] = [];
  const badChars = [...new Set([...name].filter((c) => !/[A-Za-z0-9_-]/.test(c)))];
  if (name === '') reasons.push('is empty');
  if (badChars.length > 0) reasons.push(`contains ${badChars.map((c) => JSON.stringify(c)).join(', ')}`);
  if (name.includes('__')) reasons.push('contains "__"');
  if (name.startsWith('_')) reasons.push('starts with "_"');
  if (name.endsWith('_') && name.length > 1) reasons.push('ends with "_"');
  const comment =
    name.startsWith('_') || name.startsWith('$')
      ? `; "_"/"$" comment keys are not allowed here because every key is a ${kind} name`
      : '';
  return `invalid ${kind} name ${JSON.stringify(name)}: it ${reasons.join(' and ')} (${NAME_RULE})${comment}`;
}

const LEVEL_NAMES: Record<Level, string> = {
  top: 'at the top level',
  toolbox: 'in a toolbox',
  server: 'in a server',
  toolset: 'in a toolset',
  override: 'in a tool override',
};

function unknownKeyMessage(key: string, level: Level, keys: Record<Level, readonly string[]>): string {
  const allowed = keys[level];
  const suggestion = closest(key, allowed);
  if (suggestion !== undefined) return `unknown key "${key}"; did you mean "${suggestion}"?`;
  const elsewhere = (['top', 'toolbox', 'server'] as const).find((other) => other !== level && keys[other].includes(key));
  if (elsewhere !== undefined) {
    const where = {
      top: 'at the top level',
      toolbox: 'in a toolbox ("toolboxes": { "<name>": { ... } })',
      server: 'in a server, inside a toolbox\'s "mcpServers"',
    }[elsewhere];
    return `unknown key "${key}" ${LEVEL_NAMES[level]}; "${key}" belongs ${where}`;
  }
  return (
    `unknown key "${key}" (allowed ${LEVEL_NAMES[level]}: ${allowed.join(', ')}; ` +
    'keys starting with "_" or "$" are comments)'
  );
}

/** The allowed key a typo most likely meant: case-insensitive edit distance, or one name containing the other. */
export function closest(key: string, candidates: readonly string[]): string | undefined {
  const wanted = key.toLowerCase().replace(/[_-]/g, '');
  let best: { candidate: string; distance: number } | undefined;
  for (const candidate of candidates) {
    const lower = candidate.toLowerCase();
    let distance = editDistance(wanted, lower);
    if (distance > Math.max(1, Math.floor(lower.length / 3))) {
      const contained = wanted.length >= 5 && (lower.includes(wanted) || wanted.includes(lower));
      if (!contained) continue;
      distance = Math.abs(lower.length - wanted.length);
    }
    if (best === undefined || distance < best.distance) best = { candidate, distance };
  }
  return best?.candidate;
}

/**
 * Objects with fixed keys sit at depth 0 (top), 2 (toolboxes.<name>, toolsets.<name>), 4 (…mcpServers.<name>) and
 * under any toolOverrides.<pattern>.
 */
function levelOf(path: JsonPath): Level {
  if (path.length === 0) return 'top';
  if (path[path.length - 2] === 'toolOverrides') return 'override';
  if (path[0] === 'toolsets') return 'toolset';
  return path.length <= 3 ? 'toolbox' : 'server';
}

const STDIO_ONLY = ['command', 'args', 'env', 'cwd', 'inheritEnv'] as const;
const REMOTE_ONLY = ['url', 'headers'] as const;

/** `type` and `transport` are aliases; they may both be present only when they agree. */
function typeConflict(server: Record<string, unknown>): string | undefined {
  const { type, transport } = server;
  if (typeof type !== 'string' || typeof transport !== 'string' || type === transport) return undefined;
  return `"type" is ${JSON.stringify(type)} but "transport" is ${JSON.stringify(transport)}; "transport" is an alias of "type", keep only one`;
}

/**
 * One message for a server that fits neither the stdio nor the remote form, worked out from what the server has,
 * instead of both oneOf branches' errors.
 */
function describeServerShape(server: Record<string, unknown>): string | undefined {
  const declared = server.type ?? server.transport;
  const has = (key: string): boolean => server[key] !== undefined;
  const quoted = (list: readonly string[]): string => list.map((k) => `"${k}"`).join(', ');
  const applies = (list: readonly string[]): string => (list.length === 1 ? 'applies' : 'apply');
  const generic = 'a server needs either "command" (stdio) or "url" with type "http"/"sse"';
  if (declared === 'http' || declared === 'sse') {
    if (!has('url')) return `type "${declared}" needs "url"${has('command') ? ' ("command" is for stdio servers)' : ''}`;
    const extra = STDIO_ONLY.filter(has);
    if (extra.length > 0) return `${quoted(extra)} ${applies(extra)} only to stdio servers, not to type "${declared}"`;
    return generic;
  }
  if (declared !== undefined && declared !== 'stdio') return undefined;
  if (has('command') && has('url')) {
    return 'a server has either "command" (stdio) or "url" with type "http"/"sse", not both';
  }
  if (has('url')) {
    return declared === 'stdio'
      ? 'type "stdio" needs "command"; a server with "url" needs type "http" or "sse"'
      : 'a server with "url" needs "type": "http" or "sse"';
  }
  if (!has('command')) return declared === 'stdio' ? 'type "stdio" needs "command"' : generic;
  const extra = REMOTE_ONLY.filter(has);
  if (extra.length > 0) return `${quoted(extra)} ${applies(extra)} only to http/sse servers, not to stdio servers`;
  return generic;
}

/** The path of every server entry, whatever its shape. */
function serverPaths(raw: unknown): JsonPath[] {
  const found: JsonPath[] = [];
  const toolboxes = isRecord(raw) ? raw.toolboxes : undefined;
  if (!isRecord(toolboxes)) return found;
  for (const [toolboxName, toolbox] of Object.entries(toolboxes)) {
    const servers = isRecord(toolbox) ? toolbox.mcpServers : undefined;
    if (!isRecord(servers)) continue;
    for (const serverName of Object.keys(servers)) found.push(['toolboxes', toolboxName, 'mcpServers', serverName]);
  }
  return found;
}

/** JSON Pointer (from ajv) to a path, with array indices told apart from numeric object keys by the data. */
function pointerToPath(pointer: string, raw: unknown): JsonPath {
  if (pointer === '') return [];
  const path: (string | number)[] = [];
  let node = raw;
  for (const encoded of pointer.slice(1).split('/')) {
    const key = encoded.replace(/~1/g, '/').replace(/~0/g, '~');
    if (Array.isArray(node)) {
      path.push(Number(key));
      node = node[Number(key)];
    } else {
      path.push(key);
      node = isRecord(node) ? node[key] : undefined;
    }
  }
  return path;
}

function pathToPointer(path: JsonPath): string {
  return path.map((s) => `/${String(s).replace(/~/g, '~0').replace(/\//g, '~1')}`).join('');
}

function valueAt(raw: unknown, path: JsonPath): unknown {
  let node = raw;
  for (const segment of path) {
    if (Array.isArray(node) && typeof segment === 'number') node = node[segment];
    else if (isRecord(node) && typeof segment === 'string') node = node[segment];
    else return undefined;
  }
  return node;
}

function dedupe(problems: Problem[]): Problem[] {
  const seen = new Set<string>();
  return problems.filter((p) => {
    const key = `${JSON.stringify(p.path)}\n${p.message}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

/** Sorts problems by where their path first appears in the document (stable, so ajv's order breaks ties). */
function inDocumentOrder(problems: Problem[], raw: unknown): Problem[] {
  const span = new Map<string, { start: number; end: number }>();
  let counter = 0;
  const visit = (node: unknown, path: JsonPath): void => {
    const entry = { start: counter++, end: 0 };
    span.set(JSON.stringify(path), entry);
    if (Array.isArray(node)) node.forEach((item, index) => visit(item, [...path, index]));
    else if (isRecord(node)) for (const [key, value] of Object.entries(node)) visit(value, [...path, key]);
    entry.end = counter;
  };
  visit(raw, []);
  const rank = (problem: Problem): number => {
    const path = problem.at ?? problem.path;
    for (let length = path.length; length >= 0; length--) {
      const found = span.get(JSON.stringify(path.slice(0, length)));
      if (found !== undefined) return problem.whole ? found.end - 0.5 : found.start;
    }
    return 0;
  };
  return problems
    .map((problem, index) => ({ problem, index, rank: rank(problem) }))
    .sort((a, b) => a.rank - b.rank || a.index - b.index)
    .map((entry) => entry.problem);
}

// ---------------------------------------------------------------------------------------------------------------
// Errors.

function invalidError(source: string, problems: readonly Problem[]): WorkbenchError {
  const count = problems.length === 1 ? '1 problem' : `${problems.length} problems`;
  return new WorkbenchError('CONFIG_INVALID', `${source} is not a valid workbench config (${count}):`, {
    details: problems.map((p) => `${formatJsonPath(p.path)}: ${p.message}`),
  });
}

function dynamicModeError(source: string): WorkbenchError {
  return new WorkbenchError(
    'CONFIG_DYNAMIC_MODE',
    `${source} sets "toolMode": "dynamic", but dynamic mode was removed in 0.10.0. The workbench is proxy-only: ` +
      'downstream tools are no longer registered on the workbench itself; clients reach them through ' +
      `open_toolbox and use_tool. Run \`mcp-workbench migrate --config ${shellQuote(source)} --write\` to update ` +
      'the file, or see MIGRATION.md.',
  );
}

function readError(path: string, error: unknown): WorkbenchError {
  const code = isRecord(error) && typeof error.code === 'string' ? error.code : undefined;
  if (code === 'ENOENT' || code === 'ENOTDIR') {
    return new WorkbenchError(
      'CONFIG_NOT_FOUND',
      `Config file not found: ${path}. Create it (workbench-config.example.json shows the format), or point to ` +
        'another file with --config <path> or the WORKBENCH_CONFIG environment variable.',
      { cause: error },
    );
  }
  const reasons: Record<string, string> = {
    EACCES: 'permission denied',
    EPERM: 'operation not permitted',
    EISDIR: 'it is a directory, not a file',
  };
  const reason =
    (code !== undefined ? reasons[code] : undefined) ?? (error instanceof Error ? error.message : String(error));
  return new WorkbenchError('CONFIG_UNREADABLE', `Cannot read config file ${path}: ${reason}.`, { cause: error });
}

function shellQuote(text: string): string {
  return /^[A-Za-z0-9_./:@%+=,-]+$/.test(text) ? text : `'${text.replace(/'/g, `'\\''`)}'`;
}

function truncate(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}


import { WorkbenchError } from '../errors.js';
import { authProblems } from './auth-problems.js';
import { loadBundledSchema, type BundledSchema } from './bundled-schema.js';
import { formatJsonPath, type JsonPath } from './expand-env.js';
import { describeError, pathToPointer, pointerToPath, problemPath, valueAt, type Level } from './problem-messages.js';
import { isRecord } from './text.js';

/**
 * Validation of a config document: the JSON Schema (workbench-config.schema.json, compiled once), the checks it cannot
 * express, and the CONFIG_INVALID error listing every problem in document order. Messages: problem-messages.ts.
 */

export interface Problem {
  path: JsonPath;
  message: string;
  /** Where the problem sits in the document, when that is not `path` (an unknown key sorts where the key is). */
  at?: JsonPath;
  /** About the object as a whole (its form): listed after the problems of its keys, which often explain it. */
  whole?: boolean;
}

let compiledSchema: BundledSchema<Exclude<Level, 'top'>> | undefined;

/** Compiled once per process, on first use: start-up of commands that never load a config stays cheap. */
function schema(): BundledSchema<Exclude<Level, 'top'>> {
  compiledSchema ??= loadBundledSchema('workbench-config.schema.json', {
    toolbox: 'toolbox',
    server: 'server',
    toolset: 'toolset',
    override: 'toolOverride',
    auth: 'oauth',
    identityProvider: 'identityProvider',
  });
  return compiledSchema;
}

/** Every schema violation plus the checks JSON Schema cannot express, in document order, without duplicates. */
export function findProblems(raw: unknown): Problem[] {
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
      // `auth` is "oauth" or an object (if/then/else): the branch's own error says what is wrong, "if" adds nothing.
      if (error.keyword === 'if') continue;
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
    problems.push(...authProblems(server.auth, path));
  }

  return inDocumentOrder(dedupe(problems), raw);
}

const STDIO_ONLY = ['command', 'args', 'env', 'cwd', 'inheritEnv'] as const;
const REMOTE_ONLY = ['url', 'headers', 'auth'] as const;

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
export function inDocumentOrder(problems: Problem[], raw: unknown): Problem[] {
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

/** Unset variables and missing secrets the document uses, as `<path>: <problem>` lines and the variables' names. */
export interface UnsetReferences {
  details: string[];
  variables: string[];
}

export function invalidError(source: string, problems: readonly Problem[], unset: UnsetReferences = { details: [], variables: [] }): WorkbenchError {
  const details = [...problems.map((p) => `${formatJsonPath(p.path)}: ${p.message}`), ...unset.details];
  const count = details.length === 1 ? '1 problem' : `${details.length} problems`;
  return new WorkbenchError('CONFIG_INVALID', `${source} is not a valid workbench config (${count}):`, { details, variables: unset.variables });
}

import type { ErrorObject } from 'ajv';
import type { JsonPath } from './expand-env.js';
import { editDistance } from '../shared/edit-distance.js';
import { quoteClientText } from '../shared/client-text.js';
import { isRecord, NAME_RULE } from './text.js';

/** One sentence per schema problem: what was wrong, where, and the closest valid key or value. */

export type Level = 'top' | 'toolbox' | 'server' | 'toolset' | 'override' | 'auth' | 'identityProvider';

export function describeError(error: ErrorObject, path: JsonPath, raw: unknown, keys: Record<Level, readonly string[]>): string {
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
      // The file's own text: a string escaped (controls, bidirectional overrides) and cut, anything else cut.
      const value = valueAt(raw, path);
      const json = JSON.stringify(value);
      const got = typeof value === 'string' ? quoteClientText(value, 40) : json === undefined ? 'nothing' : truncate(json, 40);
      if (last === 'toolMode') return `unknown value ${got}; the workbench is proxy-only since 0.10.0, so remove "toolMode"`;
      return `must be one of ${allowed.join(', ')} (got ${got})`;
    }
    default:
      return error.message ?? `fails "${error.keyword}"`;
  }
}

/** Unknown keys and missing keys are reported on the object that holds them; a bad name on the entry itself. */
export function problemPath(error: ErrorObject, path: JsonPath): JsonPath {
  if (error.keyword === 'propertyNames') return [...path, String((error.params as { propertyName: unknown }).propertyName)];
  return path;
}

function typeMessage(expected: string, path: JsonPath, value: unknown): string {
  const last = path[path.length - 1];
  if (last === 'timeoutMs' || last === 'connectTimeoutMs') return 'must be a positive integer (milliseconds)';
  if (expected === 'string' && (typeof value === 'number' || typeof value === 'boolean')) {
    return `must be a string; write it in quotes: "${String(value)}"`;
  }
  // The whole file: what it must hold, since the path "(root)" alone says nothing of it.
  if (expected === 'object' && path.length === 0) {
    return 'must be a JSON object with "toolboxes", e.g. {"toolboxes": {"dev": {"mcpServers": {"s": {"command": "…"}}}}} (README "Configuration")';
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
  if (expected === 'array' && (last === 'args' || last === 'toolFilters' || last === 'disabledTools' || last === 'disabledPrompts')) {
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
  return `invalid ${kind} name ${quoteClientText(name, 60)}: it ${reasons.join(' and ')} (${NAME_RULE})${comment}`;
}

const LEVEL_NAMES: Record<Level, string> = {
  top: 'at the top level',
  toolbox: 'in a toolbox',
  server: 'in a server',
  toolset: 'in a toolset',
  override: 'in a tool override',
  auth: 'in a server\'s "auth"',
  identityProvider: 'in "auth.identityProvider"',
};

/**
 * Server keys of other MCP clients' configs that mean something else here (a near spelling would mislead: "disabled"
 * is not "disabledTools"): what each did there and what does it in the workbench.
 */
const OTHER_CLIENTS_SERVER_KEYS: Readonly<Record<string, string>> = {
  disabled:
    'turns a whole server off in other clients\' configs; the workbench has no such switch: remove the server (mcp-workbench server remove <toolbox> <server>) or keep it in a toolbox that is not opened, and hide single tools with "disabledTools"',
  enabled: 'turns a whole server on or off in other clients\' configs; the workbench has no such switch: remove the server, or hide tools with "disabledTools"',
  autoApprove: 'lets other clients call some tools without asking; the workbench does not ask: your MCP client approves each use_tool call',
  alwaysAllow: 'lets other clients call some tools without asking; the workbench does not ask: your MCP client approves each use_tool call',
};

function unknownKeyMessage(key: string, level: Level, keys: Record<Level, readonly string[]>): string {
  const allowed = keys[level];
  // The key is the file's text (a project file's comes with a cloned repository): escaped and cut, never as written.
  const shown = quoteClientText(key, 60);
  const foreign = level === 'server' ? OTHER_CLIENTS_SERVER_KEYS[key] : undefined;
  if (foreign !== undefined) return `unknown key ${shown}: ${shown} ${foreign}`;
  const suggestion = closest(key, allowed);
  if (suggestion !== undefined) return `unknown key ${shown}; did you mean "${suggestion}"?`;
  const elsewhere = (['top', 'toolbox', 'server'] as const).find((other) => other !== level && keys[other].includes(key));
  if (elsewhere !== undefined) {
    const where = {
      top: 'at the top level',
      toolbox: 'in a toolbox ("toolboxes": { "<name>": { ... } })',
      server: 'in a server, inside a toolbox\'s "mcpServers"',
    }[elsewhere];
    return `unknown key ${shown} ${LEVEL_NAMES[level]}; ${shown} belongs ${where}`;
  }
  return (
    `unknown key ${shown} (allowed ${LEVEL_NAMES[level]}: ${allowed.join(', ')}; ` +
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
  if (path[4] === 'auth') return path[5] === 'identityProvider' ? 'identityProvider' : 'auth';
  return path.length <= 3 ? 'toolbox' : 'server';
}

/** JSON Pointer (from ajv) to a path, with array indices told apart from numeric object keys by the data. */
export function pointerToPath(pointer: string, raw: unknown): JsonPath {
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

export function pathToPointer(path: JsonPath): string {
  return path.map((s) => `/${String(s).replace(/~/g, '~0').replace(/\//g, '~1')}`).join('');
}

export function valueAt(raw: unknown, path: JsonPath): unknown {
  let node = raw;
  for (const segment of path) {
    if (Array.isArray(node) && typeof segment === 'number') node = node[segment];
    else if (isRecord(node) && typeof segment === 'string') node = node[segment];
    else return undefined;
  }
  return node;
}

function truncate(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}

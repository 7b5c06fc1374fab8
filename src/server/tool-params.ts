import { ProtocolErrorCode, type CallToolResult } from '@modelcontextprotocol/server';
import { errorResult } from '../core/tool-entry.js';
import { nameProblem, quoteClientText } from '../shared/client-text.js';
import { USE_TOOL, type Usage } from './meta-tools.js';

/**
 * Checks of the meta-tools' own parameters (README "Errors"). Each check returns a sentence saying what is wrong, or
 * undefined when the parameter is fine — never throwing and allocating nothing for a good value, since these run on
 * every `use_tool`. A problem becomes a {@link refusal}: an `isError` tool result the model can correct itself from.
 */

/** enable_tools: names per list and call (a glob covers many tools). */
const MAX_NAMES_PER_CALL = 1000;

/** use_tool's parameters (one array for every call: the check runs on each). */
const USE_TOOL_PARAMS: readonly string[] = ['toolbox_name', 'tool_name', 'arguments'];

/**
 * The answer to a meta-tool call whose own parameters are wrong: the problem, the tool's signature and what to do
 * next, as an `isError` result with the code INVALID_PARAMETERS. `problem` quotes client text only through
 * `quoteClientText` and `nameProblem`, so the answer stays short whatever was sent.
 */
export function refusal(usage: Usage, problem: string): CallToolResult {
  return errorResult(`${problem}. Expected: ${usage.signature}. ${usage.next}`, 'INVALID_PARAMETERS', { hint: `Expected: ${usage.signature}. ${usage.next}` });
}

/**
 * A JSON-RPC -32602 (Invalid params) error for a protocol fault (an unknown top-level tool): the one way the workbench
 * answers a tools/call with a JSON-RPC error; its message reaches the client as written. Everything else about a
 * call is a tool result (README "Errors").
 */
export function invalidParams(message: string): Error & { code: number } {
  return Object.assign(new Error(message), { code: ProtocolErrorCode.InvalidParams });
}

/** What is wrong with use_tool's parameters, or undefined: type and length checks, nothing allocated for a good call. */
export function useToolProblem(args: Record<string, unknown>): string | undefined {
  return (
    stringProblem(args, 'toolbox_name', USE_TOOL) ??
    stringProblem(args, 'tool_name', USE_TOOL) ??
    unknownParamsProblem(args, USE_TOOL_PARAMS, USE_TOOL) ??
    objectProblem(args, 'arguments', USE_TOOL, "the tool's arguments")
  );
}

/**
 * A name parameter (`toolbox_name`, `tool_name`, `toolbox`): a non-empty string of at most 256 characters without
 * control characters, checked before any lookup so a hostile name costs nothing and is never echoed whole.
 * On use_tool's hot path: for a normal name this is a type check, a length check and one pass over its characters.
 */
export function stringProblem(args: Record<string, unknown>, key: string, tool: string): string | undefined {
  const value = args[key];
  if (typeof value === 'string') {
    const problem = nameProblem(value);
    if (problem !== undefined) return `${tool}: "${key}" ${problem}`;
    // Not blank: at once when it starts with a printable ASCII character (every real name), else by trimming.
    const first = value.charCodeAt(0);
    if ((first > 0x20 && first < 0x7f) || value.trim() !== '') return undefined;
  }
  return `${tool}: "${key}" must be a non-empty string, got ${describeValue(value)}`;
}

/** An optional parameter that must be a JSON object when present (use_tool's `arguments`). */
export function objectProblem(args: Record<string, unknown>, key: string, tool: string, what: string): string | undefined {
  const value = args[key];
  if (value === undefined || (typeof value === 'object' && value !== null && !Array.isArray(value))) return undefined;
  return `${tool}: "${key}" must be an object of ${what}, got ${describeValue(value)}`;
}

/** An optional list of names or globs (enable_tools' `enable` and `disable`). */
export function stringsProblem(args: Record<string, unknown>, key: string, tool: string): string | undefined {
  const value = args[key];
  if (value === undefined) return undefined;
  if (!Array.isArray(value) || !value.every((v) => typeof v === 'string')) {
    return `${tool}: "${key}" must be an array of tool names, got ${describeValue(value)}`;
  }
  if (value.length > MAX_NAMES_PER_CALL) {
    return `${tool}: "${key}" has ${value.length} names; at most ${MAX_NAMES_PER_CALL} per call (use a * glob for many)`;
  }
  for (const [index, name] of (value as string[]).entries()) {
    const problem = nameProblem(name);
    if (problem !== undefined) return `${tool}: "${key}"[${index}] ${problem}`;
  }
  return undefined;
}

/** Parameters the tool does not have, named (quoted, escaped, cut; the first five) — or undefined when there are none. */
export function unknownParamsProblem(args: Record<string, unknown>, allowed: readonly string[], tool: string): string | undefined {
  // Checked without building arrays: this runs on every use_tool.
  let clean = true;
  for (const key in args) if (!allowed.includes(key)) clean = false;
  if (clean) return undefined;
  const unknown = Object.keys(args).filter((k) => !allowed.includes(k));
  const shown = unknown.slice(0, 5).map((k) => quoteClientText(k)).join(', ') + (unknown.length > 5 ? ` and ${unknown.length - 5} more` : '');
  return `${tool}: unknown parameter${unknown.length > 1 ? 's' : ''} ${shown}`;
}

/** What a malformed parameter was, for a refusal ("got an array"). */
export function describeValue(value: unknown): string {
  if (value === undefined) return 'nothing';
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'string') return value.trim() === '' ? 'an empty string' : 'a string';
  return `a ${typeof value}`;
}

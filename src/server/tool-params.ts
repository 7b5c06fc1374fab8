import { ProtocolErrorCode } from '@modelcontextprotocol/server';
import { nameProblem, quoteClientText } from '../shared/client-text.js';
import { describeValue } from './open-toolbox-params.js';

/** enable_tools: names per list and call (a glob covers many tools). */
const MAX_NAMES_PER_CALL = 1000;

/**
 * A name parameter (`toolbox_name`, `tool_name`, `toolbox`): a non-empty string of at most 256 characters without
 * control characters, checked before any lookup so a hostile name costs nothing and is never echoed whole.
 * On use_tool's hot path: for a normal name this is a type check, a length check and one pass over its characters.
 */
export function requireString(args: Record<string, unknown>, key: string, tool: string): string {
  const value = args[key];
  if (typeof value === 'string') {
    const problem = nameProblem(value);
    if (problem !== undefined) throw invalidParams(`${tool}: "${key}" ${problem}`);
  }
  const trimmed = typeof value === 'string' ? value.trim() : '';
  if (trimmed === '') throw invalidParams(`${tool}: "${key}" must be a non-empty string, got ${describeValue(value)}`);
  return trimmed;
}

/**
 * A JSON-RPC -32602 error whose message reaches the client as written (an McpError's message carries an
 * "MCP error -32602:" prefix, which the client's SDK then adds a second time).
 */
export function invalidParams(message: string): Error & { code: number } {
  return Object.assign(new Error(message), { code: ProtocolErrorCode.InvalidParams });
}

export function optionalStrings(args: Record<string, unknown>, key: string, tool: string): string[] {
  const value = args[key];
  if (value === undefined) return [];
  if (!Array.isArray(value) || !value.every((v) => typeof v === 'string')) {
    throw invalidParams(`${tool}: "${key}" must be an array of tool names, got ${describeValue(value)}`);
  }
  if (value.length > MAX_NAMES_PER_CALL) {
    throw invalidParams(`${tool}: "${key}" has ${value.length} names; at most ${MAX_NAMES_PER_CALL} per call (use a * glob for many)`);
  }
  for (const [index, name] of (value as string[]).entries()) {
    const problem = nameProblem(name);
    if (problem !== undefined) throw invalidParams(`${tool}: "${key}"[${index}] ${problem}`);
  }
  return value as string[];
}

export function rejectUnknownParams(args: Record<string, unknown>, allowed: readonly string[], tool: string): void {
  // Checked without building arrays: this runs on every use_tool.
  let clean = true;
  for (const key in args) if (!allowed.includes(key)) clean = false;
  if (clean) return;
  const unknown = Object.keys(args).filter((k) => !allowed.includes(k));
  // Keys are the client's: quoted, escaped and cut, and only the first few named.
  const shown = unknown.slice(0, 5).map((k) => quoteClientText(k)).join(', ') + (unknown.length > 5 ? ` and ${unknown.length - 5} more` : '');
  throw invalidParams(`${tool}: unknown parameter${unknown.length > 1 ? 's' : ''} ${shown}; expected ${allowed.join(', ')}`);
}

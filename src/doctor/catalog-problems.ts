import type { Tool } from '@modelcontextprotocol/client';
import { Ajv } from 'ajv';
import { formatToolName } from '../catalog/names.js';
import { errorMessage } from '../errors.js';
import { MAX_CANONICAL_NAME_LENGTH, type CatalogProblem, type ProblemKind } from './types.js';

const NAME_CHARACTERS = /^[A-Za-z0-9_.-]+$/;

/** What each problem means and why it matters, as shown to the user. */
export const PROBLEM_TEXT: Record<ProblemKind, string> = {
  'duplicate-name': 'tool names listed more than once by this server: only the first of each is reachable through use_tool',
  'name-characters':
    'tool names with characters outside [A-Za-z0-9_.-]: clients and model APIs that restrict tool names may refuse them, and models copy them less reliably',
  'canonical-name-too-long': `canonical names ({toolbox}__{server}__{tool}) longer than ${MAX_CANONICAL_NAME_LENGTH} characters: some clients reject names that long; a shorter toolbox or server name fixes it`,
  'schema-root-not-object': 'input schemas whose root "type" is not "object": the MCP spec requires an object schema, and clients that check it reject the tool',
  'schema-root-combinator':
    'input schemas with oneOf/anyOf/allOf at the root: the Anthropic API rejects them ("input_schema does not support oneOf, allOf, or anyOf at the top level")',
  'schema-external-ref': 'input schemas with a $ref to another document: clients cannot resolve it, and the workbench forwards arguments unchecked',
  'schema-not-compilable': 'input schemas that do not compile as JSON Schema: the workbench forwards arguments unchecked, and strict clients reject them',
  'stdout-noise': 'the server wrote lines to stdout that are not MCP messages (servers must log to stderr); some clients drop the connection when that happens',
  'server-warning': 'warnings while talking to the server',
  'tool-held': 'tools held until a person approves them: what they tell the model is new or changed since their server\'s tools were approved, and toolChanges is "quarantine"',
  'tool-unapproved': 'tools new or changed since their server\'s tools were approved (still usable: toolChanges is "warn")',
};

/**
 * The catalog checks, on the tools as the server listed them (before the config's filters: a filtered-out tool is
 * still the server's problem, and filtering is how a user works around it).
 */
export function catalogProblems(toolbox: string, server: string, tools: readonly Tool[], ajv: Ajv): CatalogProblem[] {
  const found = new Map<ProblemKind, string[]>();
  const add = (kind: ProblemKind, item: string): void => {
    const list = found.get(kind);
    if (list) list.push(item);
    else found.set(kind, [item]);
  };
  const seen = new Set<string>();
  for (const tool of tools) {
    const name = tool.name;
    if (seen.has(name)) add('duplicate-name', name);
    seen.add(name);
    if (!NAME_CHARACTERS.test(name)) add('name-characters', name);
    if (formatToolName(toolbox, server, name).length > MAX_CANONICAL_NAME_LENGTH) add('canonical-name-too-long', formatToolName(toolbox, server, name));
    const schema = tool.inputSchema as Record<string, unknown>;
    if (schema.type !== 'object') add('schema-root-not-object', name);
    const combinators = ['oneOf', 'anyOf', 'allOf'].filter((k) => k in schema);
    if (combinators.length > 0) add('schema-root-combinator', `${name} (${combinators.join(', ')})`);
    if (hasExternalRef(schema)) {
      add('schema-external-ref', name);
      continue;
    }
    try {
      const { $schema: _ignored, ...rest } = schema;
      ajv.compile(rest);
    } catch (error) {
      add('schema-not-compilable', `${name}: ${errorMessage(error)}`);
    }
  }
  return [...found].map(([kind, items]) => ({
    kind,
    severity: kind === 'duplicate-name' ? 'error' : 'warning',
    message: PROBLEM_TEXT[kind],
    items: kind === 'duplicate-name' ? [...new Set(items)] : items,
  }));
}

function hasExternalRef(schema: unknown, depth = 0): boolean {
  if (depth > 64 || typeof schema !== 'object' || schema === null) return false;
  if (Array.isArray(schema)) return schema.some((item) => hasExternalRef(item, depth + 1));
  for (const [key, value] of Object.entries(schema)) {
    if (key === '$ref' && typeof value === 'string' && !value.startsWith('#')) return true;
    if (hasExternalRef(value, depth + 1)) return true;
  }
  return false;
}

/** Warnings the connection logged (besides the connect failure itself, which is the report's `failure`). */
export function logProblems(logged: readonly string[], noise: readonly string[], failure?: string): CatalogProblem[] {
  // The failure as the connect logged it: its message, then what to do and its details (the report shows them apart).
  const head = failure?.split('\n')[0];
  const other = logged.filter((line) => !head || !line.startsWith(head));
  const problems: CatalogProblem[] = [];
  if (noise.length > 0) problems.push({ kind: 'stdout-noise', severity: 'warning', message: PROBLEM_TEXT['stdout-noise'], items: [...noise] });
  if (other.length > 0) problems.push({ kind: 'server-warning', severity: 'warning', message: PROBLEM_TEXT['server-warning'], items: other });
  return problems;
}

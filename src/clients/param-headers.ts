/**
 * `Mcp-Param-*` headers of a modern (2026-07-28) Streamable HTTP server: a tool's inputSchema may mark properties
 * with `"x-mcp-header": "<Name>"`, and every tools/call of that tool then carries `Mcp-Param-<Name>: <value>`
 * mirroring the argument at that property's path, so that gateways can route on it without reading the body.
 *
 * The declarations are read once per listed tool ({@link scanHeaderDeclarations}); a call only turns them into
 * header values ({@link paramHeaders}).
 */
import { quoteClientText } from '../shared/client-text.js';

/** One `x-mcp-header` declaration: the property path from the schema root (through `properties` only) and its Name. */
export interface HeaderDeclaration {
  path: string[];
  name: string;
}

export type HeaderScan = { declarations: HeaderDeclaration[] } | { problem: string };

const ANNOTATION = 'x-mcp-header';
/** RFC 9110 `token`: what a header field name may be made of. */
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
/** The property types the spec lets a header mirror (`number` is not one of them). */
const HEADER_TYPES = new Set(['string', 'integer', 'boolean']);
/** Keywords whose values are instances (data), not schemas: an `x-mcp-header` key inside them annotates nothing. */
const DATA_KEYWORDS = new Set(['const', 'enum', 'default', 'examples']);
/** Keywords whose value maps names to schemas: the map's keys are names, never keywords. */
const SCHEMA_MAPS = new Set(['properties', 'patternProperties', 'dependentSchemas', '$defs', 'definitions']);

/**
 * The `x-mcp-header` declarations of a tool's inputSchema, or the first reason they make the tool invalid (and it must
 * then be left out: never offered, never called). Valid declarations sit on properties reached from the root through
 * `properties` keys alone (at any depth), have a non-empty RFC 9110 token as their Name, annotate a property whose
 * `type` is string, integer or boolean, and are unique ignoring case. An annotation anywhere else (under items,
 * additionalProperties, oneOf/anyOf/allOf/not, if/then/else, $defs, any other keyword) makes the tool invalid.
 */
export function scanHeaderDeclarations(inputSchema: unknown): HeaderScan {
  const declarations: HeaderDeclaration[] = [];
  const names = new Map<string, string>();
  // `path` is defined while the node is reachable through `properties` alone, and is where the walk came from.
  const visit = (node: unknown, path: string[] | undefined, where: string): string | undefined => {
    if (Array.isArray(node)) {
      for (let i = 0; i < node.length; i++) {
        const problem = visit(node[i], undefined, `${where}[${i}]`);
        if (problem) return problem;
      }
      return undefined;
    }
    if (typeof node !== 'object' || node === null) return undefined;
    const schema = node as Record<string, unknown>;
    if (ANNOTATION in schema) {
      const problem = declare(schema, path, where);
      if (problem) return problem;
    }
    for (const [key, value] of Object.entries(schema)) {
      if (key === ANNOTATION || DATA_KEYWORDS.has(key)) continue;
      if (SCHEMA_MAPS.has(key) && typeof value === 'object' && value !== null && !Array.isArray(value)) {
        for (const [name, child] of Object.entries(value as Record<string, unknown>)) {
          const childPath = key === 'properties' && path ? [...path, name] : undefined;
          const problem = visit(child, childPath, `${where}/${key}/${name}`);
          if (problem) return problem;
        }
      } else {
        const problem = visit(value, undefined, `${where}/${key}`);
        if (problem) return problem;
      }
    }
    return undefined;
  };
  const declare = (schema: Record<string, unknown>, path: string[] | undefined, where: string): string | undefined => {
    const at = `${ANNOTATION} at ${quoteClientText(where || '/', 120)}`;
    if (!path || path.length === 0) {
      return `${at} is not on a property reached from the schema root through "properties" alone (only such properties may be mirrored in a header)`;
    }
    const name = schema[ANNOTATION];
    if (typeof name !== 'string' || name === '') return `${at} is ${JSON.stringify(name) ?? 'undefined'}, not a non-empty string`;
    if (!TOKEN.test(name)) return `${at} is ${quoteClientText(name, 64)}, which is not a valid HTTP header name (an RFC 9110 token)`;
    if (typeof schema.type !== 'string' || !HEADER_TYPES.has(schema.type)) {
      return `${at} annotates a property of type ${JSON.stringify(schema.type ?? null)}; only string, integer and boolean properties may be mirrored in a header`;
    }
    const earlier = names.get(name.toLowerCase());
    if (earlier !== undefined) return `${at} declares ${quoteClientText(name, 64)}, which is already declared as ${quoteClientText(earlier, 64)} (header names are case-insensitive)`;
    names.set(name.toLowerCase(), name);
    declarations.push({ path, name });
    return undefined;
  };
  const problem = visit(inputSchema, [], '');
  return problem ? { problem } : { declarations };
}

/**
 * The `Mcp-Param-<Name>` headers for one call: one per declaration whose argument is present, not null, and a
 * string, boolean or finite number (an integer beyond the safe range is left out: its decimal form would not be
 * the value sent). A value that is not a plain field value is sent as `=?base64?<UTF-8 in base64>?=`.
 */
export function paramHeaders(declarations: readonly HeaderDeclaration[], args: Record<string, unknown> | undefined): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const { path, name } of declarations) {
    let value: unknown = args;
    for (const key of path) {
      if (typeof value !== 'object' || value === null || Array.isArray(value)) {
        value = undefined;
        break;
      }
      value = (value as Record<string, unknown>)[key];
    }
    const text = headerText(value);
    if (text !== undefined) headers[`Mcp-Param-${name}`] = encodeFieldValue(text);
  }
  return headers;
}

function headerText(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  if (typeof value === 'boolean') return value ? 'true' : 'false';
  if (typeof value === 'number' && Number.isFinite(value) && (!Number.isInteger(value) || Number.isSafeInteger(value))) return String(value);
  return undefined;
}

/** Printable ASCII and tab, not starting or ending with whitespace, and not already looking like the base64 form. */
const PLAIN = /^(?![ \t])[\t\x20-\x7e]*(?<![ \t])$/;
const LOOKS_ENCODED = /^=\?base64\?.*\?=$/s;

/** The value as it goes on the wire: as it is when it is a plain field value, else in the `=?base64?…?=` form. */
export function encodeFieldValue(value: string): string {
  if (value !== '' && PLAIN.test(value) && !LOOKS_ENCODED.test(value)) return value;
  return `=?base64?${Buffer.from(value, 'utf8').toString('base64')}?=`;
}

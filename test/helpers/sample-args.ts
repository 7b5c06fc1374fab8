/**
 * Minimal arguments that satisfy a tool's inputSchema: every required property gets its default, its first enum
 * value, or a small value of its type. Used by the round-trip test that calls every tool a real server lists.
 */
type Schema = {
  type?: string | string[];
  properties?: Record<string, Schema>;
  required?: string[];
  default?: unknown;
  enum?: unknown[];
  const?: unknown;
  minimum?: number;
  items?: Schema;
  minItems?: number;
  anyOf?: Schema[];
  oneOf?: Schema[];
  format?: string;
};

export function sampleArgs(schema: Schema): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const key of schema.required ?? []) out[key] = sampleValue(schema.properties?.[key] ?? {});
  return out;
}

function sampleValue(schema: Schema): unknown {
  if (schema.default !== undefined) return schema.default;
  if (schema.const !== undefined) return schema.const;
  if (schema.enum && schema.enum.length > 0) return schema.enum[0];
  const variant = schema.anyOf?.[0] ?? schema.oneOf?.[0];
  if (variant) return sampleValue(variant);
  const type = Array.isArray(schema.type) ? schema.type[0] : schema.type;
  switch (type) {
    case 'string':
      return schema.format === 'uri' ? 'https://example.test/' : 'sample';
    case 'number':
    case 'integer':
      return Math.max(schema.minimum ?? 1, 1);
    case 'boolean':
      return false;
    case 'array':
      return Array.from({ length: schema.minItems ?? 0 }, () => sampleValue(schema.items ?? {}));
    case 'object':
      return sampleArgs(schema);
    default:
      return 'sample';
  }
}

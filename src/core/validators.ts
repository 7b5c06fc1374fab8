import type { Tool } from '@modelcontextprotocol/client';
import { Ajv, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { errorMessage } from '../errors.js';
import type { Logger } from '../log.js';

// ajv-formats is CommonJS: under NodeNext the plugin function is its namespace's `default.default`.
const addFormats = addFormatsModule.default;

export function createAjv(): Ajv {
  const ajv = new Ajv({ allErrors: true, strict: false, validateSchema: false, addUsedSchema: false });
  addFormats(ajv);
  return ajv;
}

/** The detail of an ajv error worth showing: the unexpected property, or the allowed values. */
export function describeParams(params: Record<string, unknown> | undefined): string {
  if (!params) return '';
  if (typeof params.additionalProperty === 'string') return ` ("${params.additionalProperty}")`;
  if (Array.isArray(params.allowedValues)) return ` (${params.allowedValues.map((v) => JSON.stringify(v)).join(', ')})`;
  return '';
}

/**
 * Most schemas one ajv instance compiles before a fresh one takes over. ajv keeps every schema it compiled, and the
 * generated code's values, for as long as it lives, and nothing it offers releases the latter: a long-lived instance
 * fed the listings of sessions that come and go would grow without bound. Validators already handed out keep working.
 */
export const MAX_SCHEMAS_PER_AJV = 1_000;

/**
 * Argument and output validators of downstream tools, compiled with ajv on first use and kept per tool object. Every
 * session lists its servers' tools afresh (new tool objects, same schemas): a schema already compiled, by its text, is
 * not compiled again, so sessions that come and go over `serve --http` add nothing (README "Performance").
 */
export class ToolValidators {
  private readonly inputs = new WeakMap<Tool, ValidateFunction | null>();
  private readonly outputs = new WeakMap<Tool, ValidateFunction | null>();
  /** The current ajv instance and what it compiled, by schema text (null: it could not). */
  private current: { ajv: Ajv; byText: Map<string, ValidateFunction | null> } | undefined;

  constructor(private readonly log: Logger) {}

  input(tool: Tool): ValidateFunction | null {
    return this.compileCached(this.inputs, tool, tool.inputSchema);
  }

  output(tool: Tool): ValidateFunction | null {
    return this.compileCached(this.outputs, tool, tool.outputSchema);
  }

  /** Compiled once per schema; a schema ajv cannot compile is not enforced here (the server still validates). */
  private compileCached(cache: WeakMap<Tool, ValidateFunction | null>, tool: Tool, schema: object | undefined): ValidateFunction | null {
    if (cache.has(tool)) return cache.get(tool)!;
    const validate = schema ? this.compile(tool.name, schema) : null;
    cache.set(tool, validate);
    return validate;
  }

  private compile(name: string, schema: object): ValidateFunction | null {
    const { $schema: _ignored, ...rest } = schema as Record<string, unknown>;
    let text: string;
    try {
      text = JSON.stringify(rest);
    } catch (error) {
      this.log.debug(`schema of tool "${name}" not compiled, arguments forwarded unchecked: ${errorMessage(error)}`);
      return null;
    }
    if (this.current === undefined || this.current.byText.size >= MAX_SCHEMAS_PER_AJV) this.current = { ajv: createAjv(), byText: new Map() };
    const { ajv, byText } = this.current;
    const known = byText.get(text);
    if (known !== undefined) return known;
    let validate: ValidateFunction | null = null;
    try {
      validate = ajv.compile(rest);
    } catch (error) {
      this.log.debug(`schema of tool "${name}" not compiled, arguments forwarded unchecked: ${errorMessage(error)}`);
    }
    byText.set(text, validate);
    return validate;
  }
}

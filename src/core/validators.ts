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

/** Argument and output validators of downstream tools, compiled with ajv on first use and kept per tool object. */
export class ToolValidators {
  private readonly inputs = new WeakMap<Tool, ValidateFunction | null>();
  private readonly outputs = new WeakMap<Tool, ValidateFunction | null>();
  private ajv: Ajv | undefined;

  constructor(private readonly log: Logger) {}

  input(tool: Tool): ValidateFunction | null {
    return this.compileCached(this.inputs, tool, tool.inputSchema);
  }

  output(tool: Tool): ValidateFunction | null {
    return this.compileCached(this.outputs, tool, tool.outputSchema);
  }

  /** Compiled once per tool object; a schema ajv cannot compile is not enforced here (the server still validates). */
  private compileCached(cache: WeakMap<Tool, ValidateFunction | null>, tool: Tool, schema: object | undefined): ValidateFunction | null {
    if (cache.has(tool)) return cache.get(tool)!;
    let validate: ValidateFunction | null = null;
    if (schema) {
      try {
        this.ajv ??= createAjv();
        const { $schema: _ignored, ...rest } = schema as Record<string, unknown>;
        validate = this.ajv.compile(rest);
      } catch (error) {
        this.log.debug(`schema of tool "${tool.name}" not compiled, arguments forwarded unchecked: ${errorMessage(error)}`);
      }
    }
    cache.set(tool, validate);
    return validate;
  }
}

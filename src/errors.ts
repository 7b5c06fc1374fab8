/**
 * Every failure the workbench raises locally is a WorkbenchError with a stable string code, so callers (CLI exit
 * codes, meta-tool error results, tests) branch on the code and never on message text.
 */
export type WorkbenchErrorCode =
  | 'CONFIG_NOT_FOUND'
  | 'CONFIG_UNREADABLE'
  | 'CONFIG_PARSE'
  | 'CONFIG_INVALID'
  | 'CONFIG_DYNAMIC_MODE'
  | 'ENV_MISSING'
  | 'TOOLBOX_NOT_FOUND'
  | 'TOOL_NOT_FOUND'
  | 'TOOL_DISABLED'
  | 'INVALID_NAME'
  | 'CONNECT_FAILED'
  | 'CONNECT_TIMEOUT'
  | 'CALL_FAILED'
  | 'CALL_TIMEOUT'
  | 'INVALID_OUTPUT'
  | 'SERVER_EXITED'
  | 'STATE_UNWRITABLE'
  | 'USAGE';

export class WorkbenchError extends Error {
  readonly code: WorkbenchErrorCode;
  /** One line per individual problem when the error aggregates several (e.g. every schema violation). */
  readonly details: readonly string[];

  constructor(code: WorkbenchErrorCode, message: string, options: { cause?: unknown; details?: readonly string[] } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'WorkbenchError';
    this.code = code;
    this.details = options.details ?? [];
  }

  /** The message followed by its details, one per line, as printed to a user. */
  toDisplayString(): string {
    return this.details.length === 0 ? this.message : `${this.message}\n${this.details.map((d) => `  - ${d}`).join('\n')}`;
  }
}

export function isWorkbenchError(error: unknown, code?: WorkbenchErrorCode): error is WorkbenchError {
  return error instanceof WorkbenchError && (code === undefined || error.code === code);
}

/** A readable message for anything thrown, without stack noise. */
export function errorMessage(error: unknown): string {
  if (error instanceof WorkbenchError) return error.toDisplayString();
  if (error instanceof Error) return error.message;
  return String(error);
}

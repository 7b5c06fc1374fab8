/**
 * Every failure the workbench raises locally is a WorkbenchError with a stable string code, so callers (CLI exit
 * codes, meta-tool error results, tests) branch on the code and never on message text.
 */
export type WorkbenchErrorCode =
  | 'CONFIG_NOT_FOUND'
  /** A command that starts servers found a config only by the default `./workbench-config.json`: it must be named. */
  | 'CONFIG_NOT_NAMED'
  | 'CONFIG_UNREADABLE'
  /** A config file (or a backup of it) could not be written, e.g. by `migrate`. */
  | 'CONFIG_UNWRITABLE'
  | 'CONFIG_PARSE'
  /** A file named on the command line for a command's input (`tools call --args-file`) cannot be read. */
  | 'FILE_UNREADABLE'
  | 'CONFIG_INVALID'
  | 'CONFIG_DYNAMIC_MODE'
  | 'ENV_MISSING'
  /** A `${secret:NAME}` is not in the secret store (its server cannot start). */
  | 'SECRET_MISSING'
  /** The secret store cannot be read or written (a corrupt file, permissions, an unusable keychain). */
  | 'SECRET_STORE_FAILED'
  | 'TOOLBOX_NOT_FOUND'
  | 'TOOL_NOT_FOUND'
  | 'TOOL_DISABLED'
  /** Held until approved: its definition is new or changed since it was approved (`toolChanges: "quarantine"`). */
  | 'TOOL_HELD'
  | 'INVALID_NAME'
  /** A meta-tool's own parameters are missing, of the wrong type, unknown or too large (answered with its signature). */
  | 'INVALID_PARAMETERS'
  /** Tool arguments that do not match the tool's inputSchema. */
  | 'INVALID_ARGUMENTS'
  | 'CONNECT_FAILED'
  | 'CONNECT_TIMEOUT'
  | 'CALL_FAILED'
  /** The client cancelled the call. */
  | 'CALL_CANCELLED'
  | 'CALL_TIMEOUT'
  /** A downstream message was larger than the workbench's limit and was dropped. */
  | 'MESSAGE_TOO_LARGE'
  | 'INVALID_OUTPUT'
  | 'SERVER_EXITED'
  /** The tool state file does not parse (or is not shaped as one): calls are refused until it does. */
  | 'STATE_INVALID'
  | 'STATE_UNREADABLE'
  | 'STATE_UNWRITABLE'
  /** `serve --audit-log`: the file cannot be created or opened for appending. */
  | 'AUDIT_UNWRITABLE'
  /** The workbench (or the client session) is closing; nothing new is started. */
  | 'SHUTTING_DOWN'
  /** A client of MCP 2026-07-28 came back for a call's input round that this process no longer (or never) held. */
  | 'INPUT_ROUND_UNKNOWN'
  /** A client of MCP 2026-07-28 continued a call's input round while another of its requests was continuing it. */
  | 'INPUT_ROUND_BUSY'
  /** A server answered the call with -32042: the user must first open the URLs it gave (see `elicitations`). */
  | 'URL_ELICITATION_REQUIRED'
  /** A client of MCP 2026-07-28 has as many calls waiting for its input as the workbench holds (README "Protocol eras"). */
  | 'INPUT_ROUNDS_FULL'
  /** A remote server needs an OAuth sign-in that cannot happen now (no browser, `serve --no-browser`): see `failure`. */
  | 'SIGN_IN_REQUIRED'
  /** An OAuth sign-in was tried and failed (refused in the browser, the authorization server's error, timed out). */
  | 'SIGN_IN_FAILED'
  /** The OAuth token directory cannot be written (permissions). */
  | 'OAUTH_STORE_FAILED'
  | 'USAGE';

/**
 * What is known about why a downstream server could not be connected or stopped answering, as fields (never parsed
 * back out of a message): `open_toolbox`'s servers_failed, use_tool errors and `doctor` all read these.
 */
export interface ServerFailure {
  kind:
    | 'command-not-found'
    | 'command-not-executable'
    | 'cwd-not-found'
    | 'exited'
    | 'killed'
    | 'closed'
    | 'handshake-timeout'
    | 'http-status'
    | 'unreachable'
    | 'shutting-down'
    /** Its config entry cannot be used as written (an unset variable, a malformed URL): see `problems`. */
    | 'misconfigured'
    /** An OAuth-protected remote server that needs a sign-in first: run `signInCommand`. */
    | 'needs-sign-in'
    | 'other';
  /** The process's exit code (kind "exited"). */
  exitCode?: number;
  /** The signal that ended the process (kind "killed"). */
  signal?: string;
  /** The HTTP status a remote server answered with (kind "http-status"). */
  httpStatus?: number;
  /** The handshake timeout that was exceeded (kind "handshake-timeout"). */
  timeoutMs?: number;
  /** The last lines the process wrote to stderr. */
  stderrTail?: string[];
  /** Why its config entry cannot be used (kind "misconfigured"). */
  problems?: ServerProblem[];
  /** The command that signs in to it (kind "needs-sign-in"): `mcp-workbench auth login <toolbox>/<server>`. */
  signInCommand?: string;
}

/**
 * Something wrong with one server's entry in the config that keeps that server (and only it) from starting. Carries
 * names and paths, never a value: expanded values may be secrets.
 */
export interface ServerProblem {
  /**
   * `env-missing`: a `${VAR}` without a default whose variable is unset; `invalid-url`: `url` is not an absolute
   * http(s) URL; `empty-value`: `command` or `cwd` is empty after expansion; `secret-missing`: a `${secret:NAME}`
   * whose secret is not in the secret store (or the store could not be read); `credentials-twice`: `url` has user
   * info (sent as `Authorization: Basic`) and `headers` an `Authorization` header too; `oauth-per-user-url`: `url`
   * names `${user:…}` (an endpoint per user) and `auth` asks for the workbench's one OAuth sign-in; `command-not-found`: `command`
   * is not found where the server would start, `cwd-not-found`: its `cwd` does not exist (only `validate` looks for
   * these two: either may be fixed while serving, and connecting reports them at once).
   */
  kind: 'env-missing' | 'invalid-url' | 'empty-value' | 'secret-missing' | 'credentials-twice' | 'oauth-per-user-url' | 'command-not-found' | 'cwd-not-found';
  /** Where in the config, as `toolboxes.dev.mcpServers.fs.args[2]`. */
  path: string;
  /** The unset variables used at `path` (kind "env-missing"), in order of use. */
  variables?: string[];
  /** The secrets used at `path` that are not available (kind "secret-missing"), in order of use. */
  secrets?: string[];
  /** What is wrong, as a phrase that follows the path (`<path>: <message>`). */
  message: string;
  /** What to do about it. */
  fix: string;
}

/**
 * Whether the same call may succeed if simply made again later, without changing anything: true for a timeout, a
 * server that crashed or could not be reached (it is restarted on next use), a cancelled call, a server still in
 * backoff; false where the call, the config or a person must change something first (an unknown or disabled tool,
 * invalid arguments, a broken state file, a server that cannot start as configured, a remote server that refused its
 * credentials with 401 or 403, at connect or on a call). Programs and models read it from
 * `_meta["mcp-workbench/error"].retryable` (README "Errors").
 */
export function isRetryable(code: WorkbenchErrorCode, failure?: ServerFailure): boolean {
  switch (code) {
    case 'CALL_TIMEOUT':
    case 'CONNECT_TIMEOUT':
    case 'CALL_CANCELLED':
    case 'SERVER_EXITED':
    case 'SHUTTING_DOWN':
    case 'INPUT_ROUNDS_FULL':
      return true;
    case 'CONNECT_FAILED':
      // A crash or an unreachable host may pass; a missing command, a misconfigured entry or a credential the server
      // refused (401, 403: as on a call) will not.
      if (failure?.kind === 'http-status' && (failure.httpStatus === 401 || failure.httpStatus === 403)) return false;
      return failure === undefined || !['command-not-found', 'command-not-executable', 'cwd-not-found', 'misconfigured'].includes(failure.kind);
    case 'CALL_FAILED':
      // A remote server's 5xx or 429 (overloaded, restarting, a gateway's hiccup) may pass; a 401, 403 or 404 will not.
      if (failure?.kind === 'http-status') return failure.httpStatus !== undefined && (failure.httpStatus >= 500 || failure.httpStatus === 429);
      return failure !== undefined && ['exited', 'killed', 'closed', 'unreachable'].includes(failure.kind);
    default:
      return false;
  }
}

/** Where a failure happened, as names (never parsed back out of a message). */
export interface FailureSite {
  toolbox?: string;
  server?: string;
  /** The downstream tool's own name (not the canonical `{toolbox}__{server}__{tool}`). */
  tool?: string;
}

export interface WorkbenchErrorOptions extends FailureSite {
  cause?: unknown;
  /** One line per individual problem when the error aggregates several (e.g. every schema violation). */
  details?: readonly string[];
  /** For failures of a downstream server: what happened to it, as fields. */
  failure?: ServerFailure;
  /** What to do next, as one or more sentences; shown after the message. */
  hint?: string;
  /** A downstream server's own JSON-RPC error code (CALL_FAILED from an error response). Never passed on as ours. */
  downstreamCode?: number;
  /** The environment variables the failure is about (`ENV_MISSING`: the unset ones, each once, in order of use). */
  variables?: readonly string[];
  /**
   * For the terminal only: an excerpt of the file the failure is about (a line with a caret under the fault). Never
   * shown to a client: a config, state or project file may hold secrets, and a project file may point elsewhere.
   */
  local?: string;
  /** `URL_ELICITATION_REQUIRED`: the URL-mode elicitations the server asked the user to complete, as it sent them. */
  elicitations?: readonly UrlElicitation[];
}

/** A URL-mode elicitation a server asked for in its -32042 error: what to tell the user, and where to send them. */
export interface UrlElicitation {
  mode: 'url';
  message: string;
  url: string;
  elicitationId?: string;
}

/**
 * The workbench's typed failure: a stable code (what kind of failure), where it happened (toolbox, server, tool), what
 * happened to the server (`failure`), what to do next (`hint`) and whether simply retrying may succeed (`retryable`).
 * It travels as it is from the place it happens to the one place that shows it — `failureResult` (a tool result),
 * the CLI (exit code and message), or a JSON-RPC error for protocol faults — and no field is ever parsed back out of
 * the message text.
 */
export class WorkbenchError extends Error {
  readonly code: WorkbenchErrorCode;
  readonly details: readonly string[];
  readonly failure: ServerFailure | undefined;
  readonly site: Readonly<FailureSite>;
  readonly hint: string | undefined;
  readonly downstreamCode: number | undefined;
  /** See {@link WorkbenchErrorOptions.variables}; empty when the failure names none. */
  readonly variables: readonly string[];
  /** See {@link WorkbenchErrorOptions.local}: {@link errorMessage} shows it, {@link toDisplayString} (for clients) never. */
  readonly local: string | undefined;
  /** See {@link WorkbenchErrorOptions.elicitations}. */
  readonly elicitations: readonly UrlElicitation[] | undefined;

  constructor(code: WorkbenchErrorCode, message: string, options: WorkbenchErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'WorkbenchError';
    this.code = code;
    this.details = options.details ?? [];
    this.failure = options.failure;
    this.site = siteOf(options);
    this.hint = options.hint;
    this.downstreamCode = options.downstreamCode;
    this.variables = options.variables ?? [];
    this.local = options.local;
    this.elicitations = options.elicitations;
  }

  /** Whether the same call may succeed if simply made again later (see {@link isRetryable}). */
  get retryable(): boolean {
    return isRetryable(this.code, this.failure);
  }

  /** The same failure, placed: `site` fills in what is not known yet (the tool, once the caller knows it). */
  at(site: FailureSite): WorkbenchError {
    const placed = new WorkbenchError(this.code, this.message, { ...this.options(), ...site, ...this.site });
    placed.stack = this.stack;
    return placed;
  }

  /**
   * The message, its hint, then its details one per line, as printed to a user. Without `withHint`, what was wrong
   * only: for an answer that carries the hint in a field of its own (README "Errors"), so it is not said twice.
   */
  toDisplayString(withHint = true): string {
    const head = this.hint === undefined || !withHint ? this.message : `${this.message}${this.message.includes('\n') ? '\n' : ' '}${this.hint}`;
    return this.details.length === 0 ? head : `${head}\n${this.details.map((d) => `  - ${d}`).join('\n')}`;
  }

  private options(): WorkbenchErrorOptions {
    return { cause: this.cause, details: this.details, failure: this.failure, hint: this.hint, downstreamCode: this.downstreamCode, variables: this.variables, local: this.local, elicitations: this.elicitations, ...this.site };
  }
}

function siteOf(options: FailureSite): FailureSite {
  const site: FailureSite = {};
  if (options.toolbox !== undefined) site.toolbox = options.toolbox;
  if (options.server !== undefined) site.server = options.server;
  if (options.tool !== undefined) site.tool = options.tool;
  return site;
}

export function isWorkbenchError(error: unknown, code?: WorkbenchErrorCode): error is WorkbenchError {
  return error instanceof WorkbenchError && (code === undefined || error.code === code);
}

/** A readable message for anything thrown, without stack noise. */
export function errorMessage(error: unknown): string {
  if (error instanceof WorkbenchError) return error.local === undefined ? error.toDisplayString() : `${error.toDisplayString()}\n${error.local}`;
  if (error instanceof Error) return error.message;
  return String(error);
}

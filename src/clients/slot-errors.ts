import { ProtocolError, ProtocolErrorCode, SdkError, SdkErrorCode, SdkHttpError, type Transport } from '@modelcontextprotocol/client';
import { existsSync } from 'node:fs';
import type { ServerConfig, StdioServerConfig } from '../config/types.js';
import { WorkbenchError, errorMessage, type ServerFailure, type UrlElicitation } from '../errors.js';
import type { Cancellation } from '../shared/cancellation.js';
import { CONNECTION_LOST_CODES, networkCode, networkReason } from '../shared/errno.js';
import { asSentence } from '../shared/sentence.js';
import { MalformedResultError, ResponseStreamLostError } from './call-channel.js';
import { lookOnPath } from './command-check.js';
import { httpStatusOf, stderrOf, summary } from './server-failure.js';
import { droppedMessageOf } from './dropped-message.js';
import type { StartSteps } from './start-steps.js';
import { ChildProcessTransport } from './stdio-transport.js';
import { describeUrl } from './transports.js';

/**
 * How a server slot explains a failed connect or call as a typed WorkbenchError: what was wrong, where, and what to
 * do next. The slot redacts the result before it leaves.
 */

/** Who failed: the slot's label (toolbox/server) and its config. */
export interface SlotIdentity {
  label: string;
  config: ServerConfig;
}

/** What is known about how a connection ended, as fields. */
export function endOf(transport: Transport): ServerFailure {
  if (!(transport instanceof ChildProcessTransport)) return { kind: 'closed' };
  const exit = transport.exitInfo;
  const stderr = stderrOf(transport);
  if (!exit) return { kind: 'closed', ...stderr };
  if (exit.signal) return { kind: 'killed', signal: exit.signal, ...stderr };
  return { kind: 'exited', ...(exit.code !== null ? { exitCode: exit.code } : {}), ...stderr };
}

/**
 * A failed connect as a typed error; what to do next is said in `slot.steps`' words (the model's, or the CLI's commands),
 * for a server of toolbox `slot.toolbox`.
 */
export function describeConnectError(
  slot: SlotIdentity & { toolbox: string; steps: StartSteps },
  error: unknown,
  transport: Transport,
  timedOut: boolean,
  timeoutMs: number,
): WorkbenchError {
  if (error instanceof WorkbenchError) return error;
  const code = (error as NodeJS.ErrnoException | undefined)?.code ?? (transport instanceof ChildProcessTransport ? transport.startError?.code : undefined);
  if (slot.config.type === 'stdio' && (code === 'ENOENT' || code === 'EACCES')) {
    const path = transport instanceof ChildProcessTransport ? transport.searchPath : process.env.PATH;
    return commandError(slot.label, slot.config, code, error, path, (todo) => slot.steps.needsAPerson(slot.toolbox, todo));
  }
  if (timedOut) {
    return new WorkbenchError(
      'CONNECT_TIMEOUT',
      `${slot.label} did not complete the MCP handshake within ${timeoutMs} ms and was stopped.`,
      {
        cause: error,
        failure: { kind: 'handshake-timeout', timeoutMs, ...stderrOf(transport) },
        hint: handshakeTimeoutHint(slot.config, (npx, check) => slot.steps.startTimedOut(slot.toolbox, npx, check)),
      },
    );
  }
  if (transport instanceof ChildProcessTransport) {
    // Whatever the SDK reported (connection closed, write after exit), a stdio server that failed its handshake is
    // explained by how its process ended.
    const failure = endOf(transport);
    return new WorkbenchError(
      'CONNECT_FAILED',
      asSentence(`${slot.label} failed to start: ${summary(failure)}`),
      { cause: error, failure, hint: startFailureHint(slot.config, failure, slot.steps.startFailed(slot.toolbox)) },
    );
  }
  // Never the full URL: an expanded secret may sit in its query string.
  const where = slot.config.type === 'stdio' ? '' : ` at ${describeUrl(slot.config.url)}`;
  const status = httpStatusOf(error);
  const failure: ServerFailure = status !== undefined ? { kind: 'http-status', httpStatus: status } : { kind: 'unreachable' };
  const content = status === undefined ? notMcpReply(error) : undefined;
  if (content !== undefined) {
    return new WorkbenchError('CONNECT_FAILED', `${slot.label}${where} could not be connected: it answered with ${content}, not MCP (JSON or an event stream).`, {
      cause: error,
      failure: { kind: 'other' },
      hint: `${NOT_MCP_HINT} The next call tries again; use other servers' tools meanwhile.`,
    });
  }
  const network = status === undefined ? networkReason(error) : undefined;
  const what = network === undefined ? `could not be connected: ${asSentence(errorMessage(error))}` : `could not be reached: ${network}.`;
  return new WorkbenchError('CONNECT_FAILED', `${slot.label}${where} ${what}`, { cause: error, failure, hint: remoteHint(status, slot.steps.checkRemote(slot.toolbox)) });
}

/**
 * What to do about a server that never finished its handshake (`say`: StartSteps.startTimedOut): the toolbox's other
 * servers now, a retry later (it may only be slow, or still downloading), and, if it keeps timing out, the config's fix.
 */
function handshakeTimeoutHint(config: ServerConfig, say: (npx: boolean, check: string) => string): string {
  return say(isNpx(config), config.type === 'stdio' ? 'that the server speaks MCP on stdio' : 'that its URL is an MCP endpoint and reachable');
}


/** What to do about a URL that answered with something other than MCP. */
const NOT_MCP_HINT = 'Something other than the MCP server answered (a sign-in or error page of a proxy in front of it?): check its "url" in the config and what serves it.';

/** The content type of a reply that was not MCP (an HTML page where JSON or an event stream was due), from the SDK's typed error. */
function notMcpReply(error: unknown): string | undefined {
  for (let e: unknown = error, depth = 0; e instanceof Error && depth < 5; e = e.cause, depth++) {
    if (e instanceof SdkError && e.code === SdkErrorCode.ClientHttpUnexpectedContent) {
      const type = (e.data as { contentType?: unknown } | undefined)?.contentType;
      return typeof type === 'string' ? type : 'an unknown content type';
    }
  }
  return undefined;
}

/**
 * What to do about a remote server that could not be connected, by the HTTP status it answered (if any); `check` when
 * none of them tells more (StartSteps.checkRemote).
 */
function remoteHint(status: number | undefined, check: string): string {
  const later = 'the next call tries again; use other servers\' tools meanwhile.';
  if (status === 401 || status === 403) return `Check the credentials in its "headers" (or sign in again with \`mcp-workbench auth login\`): retrying will not help until they change; use other servers' tools meanwhile.`;
  if (status === 404 || status === 405) return `Check the path of its "url": it must be the MCP endpoint (often ending in /mcp or /sse); ${later}`;
  if (status !== undefined && status >= 500) return `The server failed; retry later: ${later}`;
  return check;
}

/**
 * A stdio server whose process could not be started: the command (as expanded; the slot redacts secrets by meaning)
 * was not found or is not executable, or its `cwd` does not exist (spawn reports that as ENOENT too). A command looked
 * up on `path` that fails with EACCES may not exist at all: the lookup says EACCES when any directory on the PATH could
 * not be searched, so the PATH is looked at again to tell a file that is not executable from one that is nowhere.
 */
function commandError(label: string, config: StdioServerConfig, code: 'ENOENT' | 'EACCES', cause: unknown, path: string | undefined, needsAPerson: (todo: string) => string): WorkbenchError {
  // What was wrong goes in the message, what a person can do about it in the hint: each said once (README "Errors").
  if (config.cwd !== undefined && !existsSync(config.cwd)) {
    return new WorkbenchError('CONNECT_FAILED', `${label} could not start: its working directory "${config.cwd}" does not exist.`, {
      cause,
      failure: { kind: 'cwd-not-found' },
      hint: needsAPerson('create it, or fix "cwd" of this server in the config'),
    });
  }
  const onPath = !config.command.includes('/') && !config.command.includes('\\');
  // Looked up where the child looked: on its PATH, an empty or relative entry taken from its cwd.
  const found = code === 'EACCES' && onPath ? lookOnPath(config.command, { path, cwd: config.cwd }) : undefined;
  const missing = code === 'ENOENT' || found?.kind === 'not-found';
  const [what, todo] = !missing
    ? [`command "${found?.kind === 'not-executable' ? found.file : config.command}" is not executable.`, 'make it executable (chmod +x), or fix "command" of this server in the config']
    : onPath
      ? [`command "${config.command}" was not found on the PATH the server starts with${unsearchedNote(found?.kind === 'not-found' ? found.unsearchable : [])}.`, 'install it, or fix "command" of this server in the config (an absolute path always works)']
      : [`command "${config.command}" does not exist.`, 'install it there, or fix "command" of this server in the config'];
  return new WorkbenchError('CONNECT_FAILED', `${label} could not start: ${what}`, {
    cause,
    failure: { kind: missing ? 'command-not-found' : 'command-not-executable' },
    hint: needsAPerson(todo),
  });
}

function unsearchedNote(dirs: readonly string[]): string {
  if (dirs.length === 0) return '';
  const shown = dirs.slice(0, 3).map((dir) => `"${dir}"`).join(', ');
  return ` (the workbench may not search ${shown}${dirs.length > 3 ? ` and ${dirs.length - 3} more` : ''} on it: permission denied)`;
}

/** Whether the connection's server has stopped: a child that has exited is known at once (its exit event), before the connection is reported closed. */
export function hasStopped(live: { dead: boolean; transport: Transport }): boolean {
  return live.dead || (live.transport instanceof ChildProcessTransport && live.transport.exitInfo !== undefined);
}

export function describeCallError(
  slot: SlotIdentity,
  error: unknown,
  live: { dead: boolean; transport: Transport },
  tool: string,
  timeout: number,
  cancellation: Cancellation | undefined,
): WorkbenchError {
  const what = `tool "${tool}" on ${slot.label}`;
  if (hasStopped(live)) {
    const failure = endOf(live.transport);
    return new WorkbenchError(
      'SERVER_EXITED',
      `${what} failed: the server stopped (${summary(failure)}).`,
      { cause: error, failure, tool, hint: 'It will be restarted on the next call; retry if the tool is safe to repeat.' },
    );
  }
  if (error instanceof ResponseStreamLostError) {
    return new WorkbenchError('CALL_FAILED', `${what} failed: the connection to the server was lost before it answered (${error.message}; the server may have stopped or restarted).`, {
      cause: error,
      failure: { kind: 'closed' },
      tool,
      hint: 'The next call connects again; retry if the tool is safe to repeat.',
    });
  }
  // The arguments could not even be written for the server (nested thousands of levels deep): the call never left.
  if (error instanceof RangeError && /call stack/i.test(error.message)) return tooDeeplyNested(what, tool, error);
  if (error instanceof MalformedResultError) {
    return new WorkbenchError('INVALID_OUTPUT', `${what} failed: ${error.message}.`, { cause: error, tool, hint: "Report this to the server's maintainers." });
  }
  if (error instanceof SdkError && error.code === SdkErrorCode.RequestTimeout) {
    return new WorkbenchError(
      'CALL_TIMEOUT',
      `${what} did not answer within ${timeout} ms and was cancelled.`,
      { cause: error, tool, hint: 'Retry, or raise "timeoutMs" for this server if the tool is expected to take longer.' },
    );
  }
  if (cancellation?.cancelled) {
    return new WorkbenchError('CALL_CANCELLED', `${what} was cancelled by the client`, { cause: error, tool });
  }
  const dropped = droppedMessageOf(error);
  if (dropped) {
    return new WorkbenchError('MESSAGE_TOO_LARGE', `${what} failed: ${dropped}.`, { cause: error, tool, hint: 'Ask for less output (narrower arguments).' });
  }
  if (error instanceof ProtocolError) {
    const elicitations = error.code === ProtocolErrorCode.UrlElicitationRequired ? urlElicitations(error.data) : [];
    if (elicitations.length > 0) return urlElicitationRequired(what, tool, error, elicitations);
    const hint = downstreamErrorHint(error);
    // The server's own message, as it sent it: nothing is parsed out of it, and its code is carried as a field.
    return new WorkbenchError('CALL_FAILED', `${what} returned a JSON-RPC error (code ${error.code}): ${downstreamMessage(error)}.`, {
      cause: error,
      tool,
      downstreamCode: error.code,
      ...(hint !== undefined && { hint }),
    });
  }
  return remoteCallError(what, tool, error) ?? new WorkbenchError('CALL_FAILED', `${what} failed: ${errorMessage(error)}`, { cause: error, tool });
}

/**
 * A call to a connected remote server that failed on the HTTP level — an error status (a gateway's 503, a revoked
 * token's 401), a reply that is not MCP (a sign-in page), a connection that could not be made (it stopped) — said as
 * that, with the status as a field and what to do next; undefined for anything else. Retryable as the cause is (see
 * isRetryable): a 5xx, 429 or unreachable server may pass, a refused credential will not.
 */
function remoteCallError(what: string, tool: string, error: unknown): WorkbenchError | undefined {
  if (error instanceof SdkHttpError) {
    const status = error.status;
    const words = error.statusText ? ` (${error.statusText})` : '';
    return new WorkbenchError('CALL_FAILED', `${what} failed: the server answered HTTP ${status}${words}${bodyExcerpt(error.data.text)}.`, {
      cause: error,
      tool,
      failure: { kind: 'http-status', httpStatus: status },
      hint: httpCallHint(status),
    });
  }
  const content = notMcpReply(error);
  if (content !== undefined) {
    return new WorkbenchError('CALL_FAILED', `${what} failed: the server answered with ${content}, not MCP (JSON or an event stream).`, { cause: error, tool, failure: { kind: 'other' }, hint: NOT_MCP_HINT });
  }
  const network = networkReason(error);
  if (network === undefined) return undefined;
  const lost = CONNECTION_LOST_CODES.has(networkCode(error) ?? '');
  return new WorkbenchError('CALL_FAILED', `${what} failed: ${lost ? 'the connection to the server was lost' : 'the server could not be reached'}: ${network}.`, {
    cause: error,
    tool,
    failure: { kind: lost ? 'closed' : 'unreachable' },
    hint: "Check that the server is running (`mcp-workbench doctor` checks it); the next call tries again (retry if the tool is safe to repeat); use other servers' tools meanwhile.",
  });
}

/** What to do about a call a remote server answered with an HTTP error status. */
function httpCallHint(status: number): string {
  if (status === 401 || status === 403) return 'The server refused the credentials: check those in its "headers" in the config (or sign in again with `mcp-workbench auth login`); retrying will not help until then.';
  if (status === 429 || status >= 500) return 'The server (or a gateway in front of it) is failing or overloaded: retry later; use other servers\' tools meanwhile.';
  return 'Check the "url" of this server in the config (`mcp-workbench doctor` checks it).';
}

/** The start of an HTTP error's body, when it is short plain text worth quoting (not an HTML page): ": …". */
function bodyExcerpt(text: unknown): string {
  if (typeof text !== 'string') return '';
  const line = text.replace(/\s+/g, ' ').trim();
  if (line === '' || line.startsWith('<')) return '';
  return `: ${line.length > 200 ? `${line.slice(0, 200)}…` : line}`;
}

/**
 * A server's -32042 error (URL elicitation required: a handshake-era server needs the user in a browser first): the
 * URLs, named in the text for the model to show the user, and carried as they came (`elicitations`).
 */
function urlElicitationRequired(what: string, tool: string, error: ProtocolError, elicitations: UrlElicitation[]): WorkbenchError {
  const steps = elicitations.map((e) => `${e.message}: ${e.url}`).join('; ');
  return new WorkbenchError('URL_ELICITATION_REQUIRED', `${what} needs the user to open ${elicitations.length === 1 ? 'a URL' : `${elicitations.length} URLs`} first: ${steps}.`, {
    cause: error,
    tool,
    downstreamCode: error.code,
    elicitations,
    hint: 'Show the user the URL(s) to open in a browser; once they have finished there, make the same call again.',
  });
}

/** The URL-mode elicitations of a -32042 error's data (`elicitations`): those with a string url, their fields as sent. */
function urlElicitations(data: unknown): UrlElicitation[] {
  const list = (data as { elicitations?: unknown } | undefined)?.elicitations;
  if (!Array.isArray(list)) return [];
  const found: UrlElicitation[] = [];
  for (const item of list as unknown[]) {
    const e = item as { message?: unknown; url?: unknown; elicitationId?: unknown } | null;
    if (typeof e !== 'object' || e === null || typeof e.url !== 'string') continue;
    found.push({ mode: 'url', message: typeof e.message === 'string' ? e.message : 'Open this URL', url: e.url, ...(typeof e.elicitationId === 'string' && { elicitationId: e.elicitationId }) });
  }
  return found;
}

const ARGUMENTS_HINT = "Check the arguments against the tool's inputSchema (open_toolbox lists it), then retry.";
/** A message that plainly concerns the call's arguments, whatever code the server gave it. */
const ABOUT_ARGUMENTS = /\b(?:arguments?|param(?:eter)?s?|input ?schema)\b/i;

/**
 * What to do about a JSON-RPC error a server answered a call with, by its code: the arguments hint only for invalid
 * params (-32602) and errors whose message plainly concerns arguments; a fitting one for the codes whose meaning is
 * known; none for a server's own codes (its message says what went wrong).
 */
export function downstreamErrorHint(error: ProtocolError): string | undefined {
  switch (error.code) {
    case ProtocolErrorCode.InvalidParams:
      return ARGUMENTS_HINT;
    case ProtocolErrorCode.MethodNotFound:
      return 'The server does not handle this request; retrying will not help.';
    case ProtocolErrorCode.MissingRequiredClientCapability: {
      const required = (error.data as { requiredCapabilities?: unknown } | undefined)?.requiredCapabilities;
      const names = required && typeof required === 'object' ? Object.keys(required) : [];
      const which = names.length > 0 ? ` (${names.join(', ')})` : '';
      return `The tool needs a capability of the calling client${which} that it does not declare; use it from a client that supports that. Retrying will not help.`;
    }
  }
  if (ABOUT_ARGUMENTS.test(error.message)) return ARGUMENTS_HINT;
  if (error.code === ProtocolErrorCode.InternalError) return "The server failed while handling the call; retry later, or report it to the server's maintainers if it persists.";
  return undefined;
}

/** Whether a stdio server starts through npx (`npx`, `npx.cmd`, a path ending in either), which downloads on first use. */
function isNpx(config: ServerConfig): boolean {
  return config.type === 'stdio' && /(^|[\\/])npx(\.cmd|\.exe)?$/i.test(config.command);
}

/**
 * What to do about a stdio server that ended before its handshake: `general` (StartSteps.startFailed). An npx server that cannot find one of its own
 * modules usually has a half-written entry in npm's npx cache (a download stopped midway), which fails every start
 * until deleted.
 */
function startFailureHint(config: ServerConfig, failure: ServerFailure, general: string): string {
  const missingModule = failure.stderrTail?.some((line) => /Cannot find (module|package)|ERR_MODULE_NOT_FOUND/.test(line)) === true;
  if (!isNpx(config) || !missingModule) return general;
  return 'npx started a package that lacks one of its own files: a download stopped midway can leave a broken entry in npm\'s npx cache. Delete the npx cache (`rm -rf ~/.npm/_npx`, or the `_npx` folder of `npm config get cache`) and it is downloaded again on next use.';
}

/** Arguments that overflowed the stack while being written for the server: the caller's to fix, nothing was sent. */
function tooDeeplyNested(what: string, tool: string, cause: RangeError): WorkbenchError {
  return new WorkbenchError('INVALID_ARGUMENTS', `${what} was not sent: its arguments are nested too deeply to be written as JSON.`, {
    cause,
    tool,
    hint: 'Send flatter arguments (no tool needs thousands of levels of nesting).',
  });
}

/** The most of a server's error message the workbench's own text carries. */
const MAX_DOWNSTREAM_MESSAGE = 2_000;

/**
 * A server's JSON-RPC error message as the workbench quotes it: without the SDK's "MCP error <code>: " prefix (the code
 * is said already) and cut to {@link MAX_DOWNSTREAM_MESSAGE} characters, saying how much was left out.
 */
function downstreamMessage(error: ProtocolError): string {
  const message = error.message.replace(/^MCP error -?\d+: /, '');
  return message.length <= MAX_DOWNSTREAM_MESSAGE ? message : `${message.slice(0, MAX_DOWNSTREAM_MESSAGE)}… (${message.length - MAX_DOWNSTREAM_MESSAGE} more characters)`;
}

/**
 * The error as it may leave a slot: placed at `site` (its toolbox/server), with its message, details and the stderr
 * tail of its structured failure redacted (a wrapped fetch error repeats the whole URL; a crashing server may print its
 * environment). The failure's fields are kept.
 */
export function redactSlotError(error: WorkbenchError, site: { toolbox: string; server: string }, redact: (text: string) => string): WorkbenchError {
  const placed = error.at(site);
  const message = redact(placed.message);
  const hint = placed.hint === undefined ? undefined : redact(placed.hint);
  const details = placed.details.map(redact);
  const tail = placed.failure?.stderrTail;
  const redactedTail = tail?.map(redact);
  const same =
    message === placed.message && hint === placed.hint && details.every((d, i) => d === placed.details[i]) && (tail === undefined || redactedTail!.every((l, i) => l === tail[i]));
  if (same) return placed;
  const failure = placed.failure && (redactedTail ? { ...placed.failure, stderrTail: redactedTail } : placed.failure);
  return new WorkbenchError(placed.code, message, { cause: placed.cause, details, failure, hint, downstreamCode: placed.downstreamCode, elicitations: placed.elicitations, ...placed.site });
}

import { SdkHttpError, SseError, type Transport } from '@modelcontextprotocol/client';
import { WorkbenchError, errorMessage, type ServerFailure, type WorkbenchErrorCode } from '../errors.js';
import { ChildProcessTransport } from './stdio-transport.js';

/**
 * Failures of downstream servers as fields (ServerFailure), built from what the transports know — exit code, signal,
 * stderr, the SDK's typed HTTP errors — and never parsed back out of a message.
 */

/** A server that could not be connected: the message, its code, and what happened as fields. */
export interface FailedServer {
  server: string;
  error: string;
  code: WorkbenchErrorCode;
  /** Whether simply trying again later may succeed (see isRetryable). */
  retryable: boolean;
  /** What to do about it, when known apart from the message. */
  hint?: string;
  failure?: ServerFailure;
}

export function shuttingDown(label: string): WorkbenchError {
  return new WorkbenchError('SHUTTING_DOWN', `${label}: the workbench is shutting down (or this client session ended)`, {
    failure: { kind: 'shutting-down' },
  });
}

export function stderrOf(transport: Transport): { stderrTail?: string[] } {
  const tail = transport instanceof ChildProcessTransport ? lastLines(transport.stderr) : [];
  return tail.length > 0 ? { stderrTail: tail } : {};
}

/** The HTTP status a remote transport reported, from the SDK's typed errors (never from message text). */
export function httpStatusOf(error: unknown): number | undefined {
  for (let e: unknown = error, depth = 0; e instanceof Error && depth < 5; e = e.cause, depth++) {
    if (e instanceof SdkHttpError && e.status >= 100 && e.status < 600) return e.status;
    if (e instanceof SseError && typeof e.code === 'number' && e.code >= 100 && e.code < 600) return e.code;
  }
  return undefined;
}

/** One sentence for a failure, for messages (the fields stay available to callers). */
export function summary(failure: ServerFailure): string {
  const how =
    failure.kind === 'killed'
      ? `the process was killed by ${failure.signal}`
      : failure.kind === 'exited'
        ? `the process exited with code ${failure.exitCode ?? 'unknown'}`
        : failure.kind === 'closed'
          ? 'the connection closed'
          : failure.kind;
  return failure.stderrTail ? `${how}; last stderr:\n${failure.stderrTail.map((l) => `  | ${l}`).join('\n')}` : `${how} (nothing on stderr)`;
}

/**
 * The entry of open_toolbox's servers_failed (and of list_all_tools) for a failed connect. Each thing is said once
 * (README "Errors"): `error` what was wrong, `hint` what to do next, and for a config entry that cannot start, each
 * problem's own `fix` in `failure.problems`, which the hint points to instead of repeating.
 */
export function failedServer(server: string, error: unknown): FailedServer {
  if (error instanceof WorkbenchError) {
    const problems = error.failure?.kind === 'misconfigured' && (error.failure.problems?.length ?? 0) > 0;
    const hint = problems ? MISCONFIGURED_HINT : error.hint;
    return {
      server,
      error: error.toDisplayString(false),
      code: error.code,
      retryable: error.retryable,
      ...(hint !== undefined ? { hint } : {}),
      ...(error.failure ? { failure: error.failure } : {}),
    };
  }
  return { server, error: errorMessage(error), code: 'CONNECT_FAILED', retryable: true };
}

/** What to do about a config entry that cannot start, when its problems (each with its `fix`) are beside it. */
const MISCONFIGURED_HINT = "Only the person running the workbench can fix this, as each of failure.problems says in its fix (retrying will not help); use other servers' tools meanwhile.";

/**
 * A failed server's reason and what to do next as one text, for a person (the CLI's lines): a config entry's fixes
 * are told from its problems, since its hint points a model to fields a person does not see.
 */
export function failedServerText(failed: Pick<FailedServer, 'error' | 'hint' | 'failure'>, separator = ' '): string {
  const problems = failed.failure?.kind === 'misconfigured' ? (failed.failure.problems ?? []) : [];
  const next =
    problems.length > 0 ? `To fix: ${problems.map((p) => (problems.length === 1 ? p.fix : `${p.path}: ${p.fix}`)).join('; ')}.` : failed.hint;
  return next === undefined ? failed.error : `${failed.error}${failed.error.includes('\n') ? '\n' : separator}${next}`;
}

/** The last few non-empty lines of stderr, each shortened. */
export function lastLines(stderr: string, lines = 8): string[] {
  return stderr
    .split('\n')
    .map((l) => l.trimEnd())
    .filter((l) => l.length > 0)
    .slice(-lines)
    .map((l) => (l.length > 300 ? `${l.slice(0, 300)}…` : l));
}

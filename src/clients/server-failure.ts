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

/** The entry of open_toolbox's servers_failed (and of list_all_tools) for a failed connect. */
export function failedServer(server: string, error: unknown): FailedServer {
  if (error instanceof WorkbenchError) {
    return {
      server,
      error: errorMessage(error),
      code: error.code,
      retryable: error.retryable,
      ...(error.hint !== undefined ? { hint: error.hint } : {}),
      ...(error.failure ? { failure: error.failure } : {}),
    };
  }
  return { server, error: errorMessage(error), code: 'CONNECT_FAILED', retryable: true };
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

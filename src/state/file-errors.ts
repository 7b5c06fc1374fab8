import { dirname } from 'node:path';
import { WorkbenchError } from '../errors.js';

// ---------------------------------------------------------------------------------------------------------------
// Errors

export function errnoCode(error: unknown): string | undefined {
  return (error as NodeJS.ErrnoException | undefined)?.code;
}

export function reasonOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

export function unwritable(path: string, action: string, error: unknown): WorkbenchError {
  const code = errnoCode(error);
  const fix =
    code === 'ENOSPC' || code === 'EDQUOT'
      ? `Free some disk space`
      : code === 'ENOTDIR' || code === 'EEXIST' || code === 'EISDIR'
        ? `Make sure every parent of ${path} is a directory and the path itself is not one`
        : `Fix the permissions of ${dirname(path)}`;
  return new WorkbenchError(
    'STATE_UNWRITABLE',
    `Cannot change the tool state file ${path}: could not ${action}: ${reasonOf(error)}. The state was not ` +
      `changed. ${fix}, or ` +
      `point --state-file / WORKBENCH_STATE_FILE at a writable location.`,
    { cause: error },
  );
}

/** Where in the state file a problem is, 1-based. */
export interface FilePosition {
  line: number;
  column: number;
}

/**
 * The state file cannot be trusted: it does not parse or is not shaped as a state file (`STATE_INVALID`, with the
 * position), or it cannot be read at all (`STATE_UNREADABLE`: permissions, a directory in its place). Whatever reads
 * it fails closed on this (README "Enabled and disabled tools"): the file is left as it is, nothing is changed, and a
 * running workbench forwards no call until the file is good again. `message` names the file, the position and the fix.
 */
export class StateFileError extends WorkbenchError {
  declare readonly code: 'STATE_INVALID' | 'STATE_UNREADABLE';

  constructor(
    code: 'STATE_INVALID' | 'STATE_UNREADABLE',
    message: string,
    /** The state file, as the user named it. */
    readonly file: string,
    /** Where the problem is (STATE_INVALID only). */
    readonly position: FilePosition | undefined,
    /** What is wrong, without the file and position (e.g. "expected ',' or ']'"). */
    readonly reason: string,
    cause?: unknown,
  ) {
    super(code, message, cause === undefined ? {} : { cause });
    this.name = 'StateFileError';
  }

  /** `file:line:column`, or the file alone when there is no position. */
  get location(): string {
    return this.position ? `${this.file}:${this.position.line}:${this.position.column}` : this.file;
  }
}

const STATE_SHAPE = '{"enabled": [], "disabled": ["toolbox__server__tool"]}';

/** A state file that does not parse, or is not shaped as one, at `position`. */
export function invalidStateFile(file: string, position: FilePosition, reason: string): StateFileError {
  return new StateFileError(
    'STATE_INVALID',
    `The tool state file ${file} is invalid at line ${position.line}, column ${position.column}: ${reason}. Fix it ` +
      `(JSONC like ${STATE_SHAPE}; comments and trailing commas are fine), or delete it to start over with every ` +
      `tool enabled.`,
    file,
    position,
    reason,
  );
}

/** A state file that exists but cannot be read (EACCES, a directory in its place, …). */
export function unreadableStateFile(file: string, error: unknown): StateFileError {
  const fix = errnoCode(error) === 'EISDIR' ? 'Put the state file there instead of the directory' : 'Fix its permissions';
  return new StateFileError(
    'STATE_UNREADABLE',
    `The tool state file ${file} cannot be read: ${reasonOf(error)}. ${fix}, or point --state-file / ` +
      `WORKBENCH_STATE_FILE at another file.`,
    file,
    undefined,
    reasonOf(error),
    error,
  );
}

/** The same problem told about `file` (the path as the user gave it), with `then` (what follows from it) added. */
export function retell(problem: StateFileError, file: string, then: string): StateFileError {
  const named = problem.position ? invalidStateFile(file, problem.position, problem.reason) : unreadableStateFile(file, problem.cause);
  return new StateFileError(named.code, `${named.message} ${then}`, file, named.position, named.reason, problem.cause);
}

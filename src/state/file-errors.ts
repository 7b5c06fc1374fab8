import { dirname } from 'node:path';
import { WorkbenchError } from '../errors.js';
import { DanglingLinkError } from '../shared/dangling-link.js';
import { errnoCode, errnoWords, reasonOf } from '../shared/errno.js';
import { folderBlocker, fsReason } from '../shared/read-only.js';
import type { LockAcquireOptions } from '../shared/file-lock.js';

/** Which file of the state room could not be changed, as messages name it. */
export interface StateRoomFile {
  /** "the tool state file", "the tool pins file". */
  name: string;
  /** The lock's subject: "the tool state". */
  subject: string;
}

export const TOOL_STATE_FILE: StateRoomFile = { name: 'the tool state file', subject: 'the tool state' };
export const TOOL_PINS_FILE: StateRoomFile = { name: 'the tool pins file', subject: 'the approved tool definitions' };

function fixFor(path: string, error: unknown): string {
  const code = errnoCode(error);
  if (code === 'ENOSPC' || code === 'EDQUOT') return 'Free some disk space';
  if (code === 'ENOTDIR' || code === 'EEXIST' || code === 'EISDIR') return `Make sure every parent of ${path} is a directory and the path itself is not one`;
  return `Fix the permissions of ${dirname(path)}`;
}

/**
 * `file` at `path` could not be changed: `problem` says what failed ("could not write the new content: …"); `fix`, when
 * known better than the error's code tells, what to do.
 */
function notChanged(path: string, problem: string, cause: unknown, file: StateRoomFile, fix?: string): WorkbenchError {
  const todo = fix ?? (cause === undefined ? undefined : fixFor(path, cause));
  const fixText = todo === undefined ? '' : ` ${todo}, or point --state-file / WORKBENCH_STATE_FILE at a writable location.`;
  const first = `${file.name[0]!.toUpperCase()}${file.name.slice(1)}`;
  return new WorkbenchError('STATE_UNWRITABLE', `Cannot change ${file.name} ${path}: ${problem}. ${first} was not changed.${fixText}`, cause === undefined ? {} : { cause });
}

export function unwritable(path: string, action: string, error: unknown, file: StateRoomFile = TOOL_STATE_FILE): WorkbenchError {
  return notChanged(path, `could not ${action}: ${fsReason(error)}`, error, file);
}

/**
 * The folder `dir` of `file` at `path` could not be made (`error`): the message names the part of its path that
 * blocks it (a file where a folder should be, a folder that cannot be written) rather than the folder asked for.
 */
export async function folderUnwritable(path: string, dir: string, error: unknown, file: StateRoomFile = TOOL_STATE_FILE): Promise<WorkbenchError> {
  const blocker = await folderBlocker(dir);
  if (!blocker) return unwritable(path, `create the directory ${dir}`, error, file);
  const fix = `${blocker.fix[0]!.toUpperCase()}${blocker.fix.slice(1)}`;
  return notChanged(path, `could not create the directory ${dir}: ${blocker.reason}`, error, file, fix);
}

/**
 * `file` at `path` is read-only (`reason`, from readOnlyReason): it is not replaced — a rename would go round its
 * permissions — and the message says how to go on.
 */
export function readOnlyFile(path: string, reason: string, file: StateRoomFile = TOOL_STATE_FILE): WorkbenchError {
  const first = `${file.name[0]!.toUpperCase()}${file.name.slice(1)}`;
  return new WorkbenchError(
    'STATE_UNWRITABLE',
    `Cannot change ${file.name} ${path}: ${reason}, so it is not replaced. ${first} was not changed. Make it writable ` +
      `(chmod u+w ${path}) if the change is meant, or point --state-file / WORKBENCH_STATE_FILE at another file.`,
  );
}

/** How the lock of a state-room file words its failures (STATE_UNWRITABLE, naming the file and the fix). */
export function lockOwner(path: string, file: StateRoomFile = TOOL_STATE_FILE): Pick<LockAcquireOptions, 'subject' | 'failure'> {
  return { subject: file.subject, failure: (problem, cause) => notChanged(path, problem, cause, file) };
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
  const code = errnoCode(error);
  const fix =
    code === 'EISDIR'
      ? 'Put the state file there instead of the directory'
      : error instanceof DanglingLinkError
        ? 'Restore the file the link points to (your disabled tools stay disabled until then), remove the link to start over with every tool enabled'
        : 'Fix its permissions';
  // What is wrong in words ("it is a directory, not a file"), not Node's "EISDIR: illegal operation …".
  const reason = errnoWords(code) ?? reasonOf(error);
  return new StateFileError(
    'STATE_UNREADABLE',
    `The tool state file ${file} cannot be read: ${reason}. ${fix}, or point --state-file / ` +
      `WORKBENCH_STATE_FILE at another file.`,
    file,
    undefined,
    reason,
    error,
  );
}

/** The same problem told about `file` (the path as the user gave it), with `then` (what follows from it) added. */
export function retell(problem: StateFileError, file: string, then: string): StateFileError {
  const named = problem.position ? invalidStateFile(file, problem.position, problem.reason) : unreadableStateFile(file, problem.cause);
  return new StateFileError(named.code, `${named.message} ${then}`, file, named.position, named.reason, problem.cause);
}

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

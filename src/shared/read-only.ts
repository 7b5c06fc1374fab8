import { access, constants, stat } from 'node:fs/promises';
import { dirname } from 'node:path';
import { errnoCode, errnoWords, reasonOf } from './errno.js';

/**
 * Why a file that is about to be replaced (temp file beside it, then rename — which the directory's permissions allow
 * whatever the file's own say) must be left alone: it exists and is read-only — not writable by this process, or
 * with no write bit for anyone (root may write anything, but a file made 0444 says "do not change me"). Undefined when
 * it may be replaced or does not exist.
 */
export async function readOnlyReason(path: string): Promise<string | undefined> {
  let mode: number;
  try {
    mode = (await stat(path)).mode;
  } catch {
    return undefined;
  }
  if ((mode & 0o222) === 0) return `it is read-only (mode ${(mode & 0o777).toString(8).padStart(4, '0')})`;
  try {
    await access(path, constants.W_OK);
  } catch {
    return 'it is not writable by this user';
  }
  return undefined;
}

/**
 * A file-system failure in words, without the path in the system's message: an atomic write fails on its temp file
 * (`c.json.1928614577`), a name the user never chose and cannot act on. Callers name the real path.
 */
export function fsReason(error: unknown): string {
  const code = errnoCode(error);
  // Only a system error's message names a path (it has `syscall`); any other message is kept as it is.
  const words = code === undefined || (error as NodeJS.ErrnoException).syscall === undefined ? undefined : errnoWords(code);
  return words !== undefined ? `${words} (${code})` : reasonOf(error);
}

/** What keeps a folder from being made: the part of its path that exists and blocks it, why, and what to do. */
export interface FolderBlocker {
  /** The nearest existing part of the folder's path. */
  path: string;
  /** "/home/me is a file, not a folder" */
  reason: string;
  /** "move or rename that file", starting in lower case. */
  fix: string;
}

/**
 * Why `dir` (and the folders above it) could not be made: the system's error names the folder asked for, while the
 * problem is the nearest part of its path that exists — a file where a folder should be, a folder this user cannot
 * write to, or one on a read-only file system. Undefined when that part looks fine (the failure was something else:
 * no space left, say), so the caller falls back to the error's own words.
 */
export async function folderBlocker(dir: string): Promise<FolderBlocker | undefined> {
  for (let path = dir; ; ) {
    let isDirectory: boolean;
    try {
      isDirectory = (await stat(path)).isDirectory();
    } catch {
      const parent = dirname(path);
      if (parent === path) return undefined;
      path = parent; // missing, under a file, or not searchable: the problem is further up
      continue;
    }
    if (!isDirectory) return { path, reason: `${path} is a file, not a folder`, fix: `move or rename the file ${path}` };
    try {
      await access(path, constants.W_OK | constants.X_OK);
      return undefined;
    } catch (error) {
      if (errnoCode(error) === 'EROFS') return { path, reason: `${path} is on a read-only file system`, fix: 'choose a folder on a writable disk' };
      return { path, reason: `${path} is a folder this user cannot write to`, fix: `make it writable (chmod u+w ${path})` };
    }
  }
}

import { access, constants, stat } from 'node:fs/promises';
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

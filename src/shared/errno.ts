/** The `code` of a Node.js system error (`ENOENT`, `EACCES`, …), if it has one. */
export function errnoCode(error: unknown): string | undefined {
  return (error as NodeJS.ErrnoException | undefined)?.code;
}

/** What went wrong, in one line: an Error's message, or the thrown value as text. */
export function reasonOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** A file-system error code in words, as every file-related message says it; undefined for a code not listed. */
export function errnoWords(code: string | undefined): string | undefined {
  return code === undefined ? undefined : WORDS[code];
}

const WORDS: Record<string, string> = {
  EACCES: 'permission denied',
  EPERM: 'operation not permitted',
  EROFS: 'the file system is read-only',
  ENOSPC: 'no space left on the device',
  EDQUOT: 'the disk quota is exceeded',
  ENOTDIR: 'a parent of it is not a directory',
  EISDIR: 'it is a directory, not a file',
};

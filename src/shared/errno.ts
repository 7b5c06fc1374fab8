/** The `code` of a Node.js system error (`ENOENT`, `EACCES`, …), if it has one. */
export function errnoCode(error: unknown): string | undefined {
  return (error as NodeJS.ErrnoException | undefined)?.code;
}

/** What went wrong, in one line: an Error's message, or the thrown value as text. */
export function reasonOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

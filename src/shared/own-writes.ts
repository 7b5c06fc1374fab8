/**
 * What a follower of a file its owner also writes needs to know of those writes (the tool state file, the pins file):
 * a read of the file that overlapped one of them — begun before it ended — may hold content older than what the owner
 * applied with it, and must be dropped and done again rather than applied. Use: `const mark = writes.mark()` before a
 * read, `writes.overlapped(mark)` after it; `writes.begin()` before an own write, calling what it returns once done.
 */
export class OwnWrites {
  /** Counts own writes begun and ended: a read that saw it change overlapped one. */
  private generation = 0;
  /** Own writes under way. */
  private writing = 0;

  /** Taken before a read, for {@link overlapped}. */
  mark(): number {
    return this.generation;
  }

  /** Whether a read begun at `mark` overlapped an own write (one begun, ended, or still under way since). */
  overlapped(mark: number): boolean {
    return mark !== this.generation || this.writing > 0;
  }

  /** An own write begins; the function returned ends it (calling it again does nothing) and says whether it ended it. */
  begin(): () => boolean {
    this.generation++;
    this.writing++;
    let ended = false;
    return () => {
      if (ended) return false;
      ended = true;
      this.generation++;
      this.writing--;
      return true;
    };
  }
}

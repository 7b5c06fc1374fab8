/** How many connects of downstream servers this process made, since it started (see ConnectWarnings.tally). */
export interface ConnectTally {
  /** Connects that succeeded, of every session's connections. */
  started: number;
  /** Connects that failed, by server (`toolbox/server`). */
  failed: ReadonlyMap<string, number>;
}

/** How many connect notes are remembered (see ConnectWarnings.noted). */
const MAX_NOTES = 1024;

/**
 * What the connects of one workbench process have told, per server: which failed connect was last warned about,
 * whether the server has started before, and how many connects succeeded and failed. Over `serve --http` every session
 * has connections of its own, so without one shared record each session would warn about the same broken server again
 * (README "Downstream servers: lifecycle, timeouts and limits": its warning is logged once per cause), and tell each
 * start of a server that always starts (README "Command line", Logs).
 */
export class ConnectWarnings {
  private readonly warned = new Map<string, string>();
  /** Each server and launch settings that connected at least once. */
  private readonly startedBefore = new Set<string>();
  /** Notes said about servers' connects (server, then the note), to say each once; emptied when it grows large. */
  private readonly notes = new Set<string>();
  private starts = 0;
  private readonly failures = new Map<string, number>();

  /**
   * A connect of `server` failed with `cause`: whether that is news (warn) — unless it is the cause last warned about,
   * which it becomes. Counted either way.
   */
  news(server: string, cause: string): boolean {
    this.failures.set(server, (this.failures.get(server) ?? 0) + 1);
    const fresh = this.warned.get(server) !== cause;
    this.warned.set(server, cause);
    return fresh;
  }

  /**
   * The server started with the launch settings `launch` (a key of them): its next failure is news again, whatever its
   * cause. Returns whether the start is news itself: the first of these settings in this process, or the first since
   * a failure was warned about.
   */
  started(server: string, launch: string): boolean {
    this.starts++;
    const key = `${server}\0${launch}`;
    const fresh = !this.startedBefore.has(key) || this.warned.has(server);
    this.startedBefore.add(key);
    this.warned.delete(server);
    return fresh;
  }

  /**
   * Whether `note` about a connect of `server` (a fallback it took: another era, the SSE transport) is news: said
   * before in this process, it is not.
   */
  noted(server: string, note: string): boolean {
    const key = `${server}\0${note}`;
    if (this.notes.has(key)) return false;
    // A note may quote an error, so their number has no bound of its own: forgetting them all only repeats some.
    if (this.notes.size >= MAX_NOTES) this.notes.clear();
    this.notes.add(key);
    return true;
  }

  /** The connects counted since the process started (a copy). */
  tally(): ConnectTally {
    return { started: this.starts, failed: new Map(this.failures) };
  }
}

/**
 * Which failed connect was last warned about, per server, for one workbench process. Over `serve --http` every session
 * has connections of its own, so without one shared record each session would warn about the same broken server
 * again (README "Downstream servers: lifecycle, timeouts and limits": its warning is logged once per cause).
 */
export class ConnectWarnings {
  private readonly warned = new Map<string, string>();

  /** Whether `cause` is news for `server`: true (warn) unless it is the cause last warned about, which it becomes. */
  news(server: string, cause: string): boolean {
    const fresh = this.warned.get(server) !== cause;
    this.warned.set(server, cause);
    return fresh;
  }

  /** The server started: its next failure is news again, whatever its cause. */
  started(server: string): void {
    this.warned.delete(server);
  }
}

import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import type { Logger } from '../log.js';

/** Told of each child process group while it lives (see OrphanReaper). */
export interface GroupTracker {
  track(pgid: number): void;
  untrack(pgid: number): void;
}

/** The watchdog's $0, so `ps` shows what it is. */
export const WATCHDOG_NAME = 'mcp-workbench-watchdog';

/** Whether a pid is a workbench's orphan watchdog (Linux /proc; false elsewhere or when it is gone). */
export function isOrphanWatchdog(pid: number): boolean {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').includes(WATCHDOG_NAME);
  } catch {
    return false;
  }
}

const SCRIPT = `
trap '' INT TERM HUP
groups=''
while IFS= read -r line; do
  case $line in
    +*) groups="$groups \${line#+}" ;;
    -*) id=\${line#-}; rest=''
        for g in $groups; do [ "$g" = "$id" ] || rest="$rest $g"; done
        groups=$rest ;;
  esac
done
[ -z "$groups" ] && exit 0
for g in $groups; do kill -s TERM -- "-$g" 2>/dev/null; done
# Up to 2 s for the groups to go; only those still there get SIGKILL (a group that is gone is not signalled again,
# so a reused number is never hit).
tries=0
while [ -n "$groups" ] && [ $tries -lt 10 ]; do
  sleep 0.2
  rest=''
  for g in $groups; do kill -s 0 -- "-$g" 2>/dev/null && rest="$rest $g"; done
  groups=$rest
  tries=$((tries + 1))
done
for g in $groups; do kill -s KILL -- "-$g" 2>/dev/null; done
exit 0
`;

/**
 * A watchdog that ends the downstream process groups if the workbench dies without closing them (SIGKILL, the OOM
 * killer, a crash in native code). Each downstream server leads its own process group so that closing ends its whole
 * tree; the price is that a signal meant for the workbench never reaches them, and a server that does not exit when
 * its stdin closes would outlive the workbench. Node has no parent-death signal, so a tiny `sh` process holds a pipe
 * from the workbench: the workbench writes `+pgid` / `-pgid` as groups start and end, and when the pipe closes —
 * however the workbench ended — the shell sends SIGTERM to every group still listed, and SIGKILL to those still there
 * two seconds later. After a normal shutdown the list is empty and it just exits. Should the shell itself die while
 * servers run, another is started at once with the whole list (at most 5 a minute).
 *
 * The shell runs in its own process group and ignores INT, TERM and HUP, so whatever kills the workbench's group or
 * terminal leaves it to do its job. It is started with the first server and costs one `sh` (about a megabyte). Not
 * used on Windows, where children are not put in process groups of their own.
 */
export class OrphanReaper implements GroupTracker {
  private shell: ChildProcess | undefined;
  private failed = false;
  private closed = false;
  /** Groups alive now: what a restarted shell must be told. */
  private readonly groups = new Set<number>();
  /** When the shell was restarted lately (a shell that keeps dying is given up on). */
  private restarts: number[] = [];

  constructor(private readonly log: Logger) {}

  track(pgid: number): void {
    if (!Number.isSafeInteger(pgid) || pgid <= 1) return;
    this.groups.add(pgid);
    this.send(`+${pgid}`);
  }

  untrack(pgid: number): void {
    if (!this.groups.delete(pgid)) return;
    this.send(`-${pgid}`);
  }

  /** Ends the watchdog after a normal shutdown (every group already closed and untracked). */
  close(): void {
    this.closed = true;
    this.shell?.stdin?.end();
    this.shell = undefined;
  }

  private send(line: string): void {
    if (process.platform === 'win32' || this.failed || this.closed) return;
    if (this.shell) this.shell.stdin?.write(`${line}\n`);
    else this.start();
  }

  /** Starts the shell and tells it every group alive now. */
  private start(): void {
    let shell: ChildProcess;
    try {
      shell = spawn('/bin/sh', ['-c', SCRIPT, WATCHDOG_NAME], { stdio: ['pipe', 'ignore', 'ignore'], detached: true });
    } catch (error) {
      this.giveUp(error);
      return;
    }
    this.shell = shell;
    shell.on('error', (error) => {
      if (this.shell === shell) this.shell = undefined;
      this.giveUp(error);
    });
    // Killed by hand or by the OOM killer (its exit, or a write into its closed pipe, tells): start another at once.
    const lost = (): void => {
      if (this.shell !== shell) return;
      this.shell = undefined;
      this.restart();
    };
    shell.on('exit', lost);
    shell.stdin?.on('error', lost);
    // Neither the shell nor its pipe keeps the workbench alive; the pipe closing is the signal.
    shell.unref();
    (shell.stdin as { unref?: () => void } | null)?.unref?.();
    if (this.groups.size > 0) shell.stdin?.write([...this.groups].map((g) => `+${g}\n`).join(''));
  }

  private restart(): void {
    if (this.closed || this.failed || this.groups.size === 0 || process.platform === 'win32') return;
    const now = Date.now();
    this.restarts = this.restarts.filter((t) => now - t < 60_000);
    if (this.restarts.length >= 5) {
      this.giveUp(new Error('it died 5 times within a minute'));
      return;
    }
    this.restarts.push(now);
    this.start();
  }

  private giveUp(error: unknown): void {
    if (this.failed) return;
    this.failed = true;
    this.log.warn(
      `the orphan watchdog could not run (${error instanceof Error ? error.message : String(error)}); downstream servers that ignore a closed stdin may outlive a killed workbench`,
    );
  }
}

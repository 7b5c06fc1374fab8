import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import type { Logger } from '../log.js';

/**
 * A watchdog that ends the downstream process groups if the workbench dies without closing them (SIGKILL, the OOM
 * killer, a crash in native code). Each downstream server leads its own process group so that closing ends its whole
 * tree; the price is that a signal meant for the workbench never reaches them, and a server that does not exit when
 * its stdin closes would outlive the workbench. Node has no parent-death signal, so a tiny `sh` process holds a pipe
 * from the workbench: the workbench writes `+pgid` / `-pgid` as groups start and end, and when the pipe closes —
 * however the workbench ended — the shell sends SIGTERM to every group still listed, then SIGKILL two seconds later.
 * After a normal shutdown the list is empty and it just exits.
 *
 * The shell runs in its own process group and ignores INT, TERM and HUP, so whatever kills the workbench's group or
 * terminal leaves it to do its job. It is started with the first server and costs one `sh` (about a megabyte). Not
 * used on Windows, where children are not put in process groups of their own.
 */
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
sleep 2
for g in $groups; do kill -s KILL -- "-$g" 2>/dev/null; done
exit 0
`;

export class OrphanReaper implements GroupTracker {
  private shell: ChildProcess | undefined;
  private failed = false;

  constructor(private readonly log: Logger) {}

  track(pgid: number): void {
    this.send(`+${pgid}`);
  }

  untrack(pgid: number): void {
    if (this.shell) this.send(`-${pgid}`);
  }

  /** Ends the watchdog after a normal shutdown (every group already closed and untracked). */
  close(): void {
    this.shell?.stdin?.end();
    this.shell = undefined;
  }

  private send(line: string): void {
    if (process.platform === 'win32' || this.failed) return;
    if (!Number.isSafeInteger(Number(line.slice(1)))) return;
    const shell = this.shell ?? this.start();
    shell?.stdin?.write(`${line}\n`);
  }

  private start(): ChildProcess | undefined {
    try {
      const shell = spawn('/bin/sh', ['-c', SCRIPT, WATCHDOG_NAME], { stdio: ['pipe', 'ignore', 'ignore'], detached: true });
      shell.on('error', (error) => {
        this.failed = true;
        this.shell = undefined;
        this.log.warn(`the orphan watchdog could not run (${error.message}); downstream servers that ignore a closed stdin may outlive a killed workbench`);
      });
      // Neither the shell nor its pipe keeps the workbench alive; the pipe closing is the signal.
      shell.unref();
      shell.stdin?.on('error', () => {});
      (shell.stdin as { unref?: () => void } | null)?.unref?.();
      this.shell = shell;
      return shell;
    } catch (error) {
      this.failed = true;
      this.log.warn(`the orphan watchdog could not start: ${error instanceof Error ? error.message : String(error)}`);
      return undefined;
    }
  }
}

import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import type { Logger } from '../log.js';
import { descendantTable, processEntry, processTable } from '../shared/process-tree.js';

/** Told of each child process group while it lives (see OrphanReaper). */
export interface GroupTracker {
  track(pgid: number): void;
  untrack(pgid: number): void;
}

/** How often the servers' descendants are looked for ones that left their group, while servers run. */
const SCAN_INTERVAL_MS = 2_000;

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

/** The watchdog shell script (exported for tests that drive it directly). */
export const WATCHDOG_SCRIPT = `
trap '' INT TERM HUP
groups=''
# Single processes that left their group, as pid:start (start = field 22 of /proc/<pid>/stat).
pids=''
start_of() {
  _l=$(cat "/proc/$1/stat" 2>/dev/null) || return 1
  _r=\${_l##*) }
  set -- $_r
  shift 19
  echo "$1"
}
# Only a process whose start time is still the one recorded: a pid reused by an unrelated process is never hit.
same() { [ "$(start_of "\${1%%:*}")" = "\${1#*:}" ]; }
while IFS= read -r line; do
  case $line in
    +*) groups="$groups \${line#+}" ;;
    -*) id=\${line#-}; rest=''
        for g in $groups; do [ "$g" = "$id" ] || rest="$rest $g"; done
        groups=$rest ;;
    p*) pids="$pids \${line#p}" ;;
    x*) id=\${line#x}; rest=''
        for e in $pids; do [ "\${e%%:*}" = "$id" ] || rest="$rest $e"; done
        pids=$rest ;;
  esac
done
[ -z "$groups" ] && [ -z "$pids" ] && exit 0
# Before any signal (Linux): every descendant of the listed groups that left them since the workbench last looked
# (a daemon that called setsid moments ago) is found by walking the process table from those groups down, with
# builtins only, and listed with its start time like any stray. Passes repeat while they find more (a pid can be
# lower than its parent's after wrap-around), at most 8.
if [ -n "$groups" ] && [ -r /proc/self/stat ]; then
  fam=' '
  pass=0
  more=1
  while [ $more = 1 ] && [ $pass -lt 8 ]; do
    more=0
    for d in /proc/[0-9]*; do
      p=\${d#/proc/}
      case $fam in *" $p "*) continue ;; esac
      read -r _l < "$d/stat" 2>/dev/null || continue
      _r=\${_l##*) }
      set -- $_r
      inside=0
      for g in $groups; do [ "$3" = "$g" ] && inside=1; done
      case $fam in *" $2 "*) ;; *) [ $inside = 1 ] || continue ;; esac
      fam="$fam$p "
      more=1
      [ $inside = 1 ] || pids="$pids $p:\${20}"
    done
    pass=$((pass + 1))
  done
fi
for g in $groups; do kill -s TERM -- "-$g" 2>/dev/null; done
rest=''
for e in $pids; do same "$e" && kill -s TERM "\${e%%:*}" 2>/dev/null && rest="$rest $e"; done
pids=$rest
# Up to 2 s for the groups to go; only those still there get SIGKILL (a group that is gone is not signalled again,
# so a reused number is never hit).
tries=0
while [ -n "$groups$pids" ] && [ $tries -lt 10 ]; do
  sleep 0.2
  rest=''
  for g in $groups; do kill -s 0 -- "-$g" 2>/dev/null && rest="$rest $g"; done
  groups=$rest
  rest=''
  for e in $pids; do same "$e" && rest="$rest $e"; done
  pids=$rest
  tries=$((tries + 1))
done
for g in $groups; do kill -s KILL -- "-$g" 2>/dev/null; done
for e in $pids; do same "$e" && kill -s KILL "\${e%%:*}" 2>/dev/null; done
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
  /** Descendants that left their server's group (setsid), by pid: their start time and the group they came from. */
  private readonly strays = new Map<number, { start: string; group: number }>();
  private scanTimer: NodeJS.Timeout | undefined;
  private scanning = false;

  constructor(private readonly log: Logger) {}

  track(pgid: number): void {
    if (!Number.isSafeInteger(pgid) || pgid <= 1) return;
    this.groups.add(pgid);
    this.send(`+${pgid}`);
    this.startScanning();
  }

  untrack(pgid: number): void {
    if (!this.groups.delete(pgid)) return;
    this.send(`-${pgid}`);
    // The group's close has ended its strays too (see ChildProcessTransport.close); the watchdog forgets them.
    for (const [pid, stray] of this.strays) {
      if (stray.group !== pgid) continue;
      this.strays.delete(pid);
      this.send(`x${pid}`);
    }
    if (this.groups.size === 0) this.stopScanning();
  }

  /** Ends the watchdog after a normal shutdown (every group already closed and untracked). */
  close(): void {
    this.closed = true;
    this.stopScanning();
    this.shell?.stdin?.end();
    this.shell = undefined;
  }

  /**
   * While servers run (Linux), their descendants are read every {@link SCAN_INTERVAL_MS} (see descendantTable: not
   * the whole process table, whose cost grows with everything else the machine runs): a descendant of a server
   * that is in a process group of its own (it called setsid, as daemons do) would escape the group signals, so its
   * pid and start time go to the watchdog, which ends it too — only if its start time still matches, so a pid
   * reused by an unrelated process is never signalled. A process that detaches and loses its parent between two
   * scans is not seen.
   */
  private startScanning(): void {
    if (this.scanTimer || process.platform !== 'linux' || this.closed) return;
    const tick = (): void => {
      void this.scan().finally(() => {
        if (this.scanTimer === undefined) return;
        this.scanTimer = setTimeout(tick, SCAN_INTERVAL_MS);
        this.scanTimer.unref();
      });
    };
    this.scanTimer = setTimeout(tick, 0);
    this.scanTimer.unref();
  }

  private stopScanning(): void {
    clearTimeout(this.scanTimer);
    this.scanTimer = undefined;
  }

  private async scan(): Promise<void> {
    if (this.scanning || this.groups.size === 0) return;
    this.scanning = true;
    try {
      // Only a complete table: a stray missing from one read for lack of file handles must not be forgotten.
      const table = (await descendantTable(this.groups)) ?? (await processTable({ complete: true }));
      const children = new Map<number, number[]>();
      for (const [pid, entry] of table) {
        const list = children.get(entry.ppid);
        if (list) list.push(pid);
        else children.set(entry.ppid, [pid]);
      }
      for (const group of [...this.groups]) {
        // The group leader is the server process itself (it was started as the leader of its own group).
        const queue = [group];
        while (queue.length > 0) {
          const pid = queue.shift()!;
          for (const child of children.get(pid) ?? []) {
            queue.push(child);
            const entry = table.get(child)!;
            if (this.groups.has(entry.pgid) || this.strays.get(child)?.start === entry.start) continue;
            this.strays.set(child, { start: entry.start, group });
            // The watchdog is told before the log says so: whoever reads the log (a test, a user about to kill -9)
            // may act on the line at once, and the pipe write is synchronous, so the watchdog already has the pid.
            this.send(`p${child}:${entry.start}`);
            this.log.debug(`watchdog: process ${child} left the process group of its server; it is ended with it`, { pid: child });
          }
        }
      }
      // Forget strays that are gone, or whose pid now names another process.
      for (const [pid, stray] of [...this.strays]) {
        // A stray whose parent ended is no descendant any more, and still the watchdog's to end while it lives.
        if ((table.get(pid) ?? (await processEntry(pid, true)))?.start === stray.start || this.strays.get(pid) !== stray) continue;
        this.strays.delete(pid);
        this.send(`x${pid}`);
      }
    } catch {
      // An unreadable or incomplete process table only means nothing is learned or forgotten this time.
    } finally {
      this.scanning = false;
    }
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
      shell = spawn('/bin/sh', ['-c', WATCHDOG_SCRIPT, WATCHDOG_NAME], { stdio: ['pipe', 'ignore', 'ignore'], detached: true });
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
    const known = [...[...this.groups].map((g) => `+${g}\n`), ...[...this.strays].map(([pid, s]) => `p${pid}:${s.start}\n`)];
    if (known.length > 0) shell.stdin?.write(known.join(''));
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

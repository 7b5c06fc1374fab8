import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';

/**
 * Finding and ending a process's descendants. Servers started through `npx` or a shell wrapper have grandchildren,
 * and the MCP SDK only ever signals the direct child; the workbench owns the whole tree it started.
 */

/** Parent pid of every process, from /proc on Linux or `ps` elsewhere. Empty when neither is available. */
async function parentMap(): Promise<Map<number, number>> {
  const map = new Map<number, number>();
  if (process.platform === 'linux') {
    for (const [pid, entry] of await processTable()) map.set(pid, entry.ppid);
    return map;
  }
  if (process.platform === 'win32') return map;
  return new Promise((resolve) => {
    execFile('ps', ['-A', '-o', 'pid=,ppid='], (error, stdout) => {
      if (!error) {
        for (const line of stdout.split('\n')) {
          const [pid, ppid] = line.trim().split(/\s+/).map(Number);
          if (pid !== undefined && ppid !== undefined && Number.isFinite(pid) && Number.isFinite(ppid)) map.set(pid, ppid);
        }
      }
      resolve(map);
    });
  });
}

/** One process as the Linux process table shows it. */
export interface ProcessEntry {
  ppid: number;
  /** Process group id. */
  pgid: number;
  /** Start time in clock ticks since boot (field 22 of /proc/<pid>/stat): with the pid, it names one process. */
  start: string;
}

/**
 * Every process with its parent, group and start time, from /proc (Linux only; empty elsewhere or when /proc cannot
 * be read). A pid with the same start time is the same process: that is how a reused pid is told apart.
 *
 * With `complete`, a table that may miss a live process of ours is an error instead: /proc cannot be listed, or a
 * process's entry cannot be read for a reason other than its end or its belonging to another user (too many open
 * files, say). A caller that takes "not in the table" to mean "gone" needs that.
 */
export async function processTable(options: { complete?: boolean } = {}): Promise<Map<number, ProcessEntry>> {
  const table = new Map<number, ProcessEntry>();
  if (process.platform !== 'linux') return table;
  let entries: string[] = [];
  try {
    entries = await readdir('/proc');
  } catch (error) {
    if (options.complete) throw error;
    return table;
  }
  await Promise.all(
    entries.map(async (entry) => {
      if (!/^\d+$/.test(entry)) return;
      const found = await processEntry(Number(entry), options.complete === true);
      if (found) table.set(Number(entry), found);
    }),
  );
  return table;
}

/**
 * One process's entry, read from /proc/<pid>/stat; undefined when it has ended or is another user's (see
 * {@link processTable}). With `complete`, any other failure to read it is thrown.
 */
export async function processEntry(pid: number, complete = false): Promise<ProcessEntry | undefined> {
  try {
    const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) is in parentheses and may contain spaces or ')' itself; field 3 follows the last ')'.
    const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return { ppid: Number(rest[1]), pgid: Number(rest[2]), start: rest[19] ?? '' };
  } catch (error) {
    // The process ended while we were reading: it is nobody's descendant any more. Nor is one we may not read
    // (another user's, under `hidepid`): our servers' processes are ours.
    if (complete && !goneOrForeign(error)) throw error;
    return undefined;
  }
}

function goneOrForeign(error: unknown): boolean {
  const code = (error as NodeJS.ErrnoException).code;
  return code === 'ENOENT' || code === 'ESRCH' || code === 'EACCES' || code === 'EPERM';
}

/** Whether this kernel lists each thread's children in /proc/<pid>/task/<tid>/children (CONFIG_PROC_CHILDREN). */
let childrenListed: boolean | undefined;

/**
 * The descendants of `roots` (not the roots themselves), each with its entry, found by walking each process's list of
 * children (every thread's: a child belongs to the thread that forked it) instead of reading every process on the
 * machine: its cost follows the size of these trees, not of the process table. Undefined where the kernel keeps no
 * such lists (or not on Linux): read {@link processTable} then. A failure to read, other than of a process that ended
 * meanwhile or is another user's, is thrown (as `processTable` does with `complete`).
 */
export async function descendantTable(roots: Iterable<number>): Promise<Map<number, ProcessEntry> | undefined> {
  if (process.platform !== 'linux') return undefined;
  childrenListed ??= existsSync(`/proc/self/task/${process.pid}/children`);
  if (!childrenListed) return undefined;
  const table = new Map<number, ProcessEntry>();
  let generation = [...roots];
  while (generation.length > 0) {
    const children = (await Promise.all(generation.map(childrenOf))).flat().filter((pid) => !table.has(pid));
    const entries = await Promise.all(children.map((pid) => processEntry(pid, true)));
    generation = [];
    children.forEach((pid, i) => {
      const entry = entries[i];
      if (entry === undefined || table.has(pid)) return;
      table.set(pid, entry);
      generation.push(pid);
    });
  }
  return table;
}

/** The children of one process, from the lists of all its threads; none once it has ended. */
async function childrenOf(pid: number): Promise<number[]> {
  let threads: string[];
  try {
    threads = await readdir(`/proc/${pid}/task`);
  } catch (error) {
    if (goneOrForeign(error)) return [];
    throw error;
  }
  const lists = await Promise.all(
    threads.map((tid) =>
      readFile(`/proc/${pid}/task/${tid}/children`, 'utf8').catch((error: unknown) => {
        // A thread that ended between the listing and the read has no children left to list.
        if (goneOrForeign(error)) return '';
        throw error;
      }),
    ),
  );
  return lists.flatMap((list) => list.split(' ').filter((word) => word !== '').map(Number));
}

/** Every live descendant of `pid` (not including it), children before grandchildren, each generation by pid. */
export async function listDescendants(pid: number): Promise<number[]> {
  const parents = await parentMap();
  const children = new Map<number, number[]>();
  // /proc is read in parallel, so the map's order varies from call to call; sorting makes the answer stable.
  for (const [child, parent] of [...parents].sort((a, b) => a[0] - b[0])) {
    const list = children.get(parent);
    if (list) list.push(child);
    else children.set(parent, [child]);
  }
  const result: number[] = [];
  const queue = [pid];
  while (queue.length > 0) {
    const next = queue.shift()!;
    for (const child of children.get(next) ?? []) {
      result.push(child);
      queue.push(child);
    }
  }
  return result;
}

/**
 * True when a process with this pid exists and is not a zombie. A zombie has already exited and only waits for its
 * parent (often init, after re-parenting) to reap it, so it counts as gone.
 */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  if (process.platform !== 'linux') return true;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return false;
  }
}

/** Sends a signal, ignoring processes that are already gone. Returns whether it was delivered. */
export function signal(pid: number, sig: NodeJS.Signals | 0): boolean {
  try {
    process.kill(pid, sig);
    return true;
  } catch {
    return false;
  }
}

/** Waits until none of `pids` is alive or `ms` elapse; returns the ones still alive. */
export async function waitForExit(pids: readonly number[], ms: number): Promise<number[]> {
  const deadline = Date.now() + ms;
  let alive = pids.filter(isAlive);
  while (alive.length > 0 && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 50));
    alive = alive.filter(isAlive);
  }
  return alive;
}

/** SIGTERM to each pid, then SIGKILL to whichever is still alive after `graceMs`. */
export async function terminateAll(pids: readonly number[], graceMs: number): Promise<void> {
  const targets = pids.filter((pid) => signal(pid, 'SIGTERM'));
  const survivors = await waitForExit(targets, graceMs);
  for (const pid of survivors) signal(pid, 'SIGKILL');
}

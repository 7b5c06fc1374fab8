import { execFileSync } from 'node:child_process';
import { cpus } from 'node:os';

/**
 * Where the processes of one call path run, for latency measured under a placement the bench controls rather than
 * the scheduler's choice: on this kind of machine the scheduler sometimes keeps a client and its server on one core
 * (a direct call then takes about a third of the time) and sometimes not, so a ratio against a direct call measured
 * unpinned partly measures that choice.
 * - `one core`: every process of the path on the same core; latency is the CPU work of the path and its switches.
 * - `crossing`: consecutive processes on alternate cores, so every hop wakes a process on the other core.
 */
export type Placement = 'one core' | 'crossing';
export const PLACEMENTS: readonly Placement[] = ['one core', 'crossing'];

/** Whether processes can be pinned here (Linux with util-linux `taskset`, at least 2 cores). */
export function canPin(): boolean {
  if (process.platform !== 'linux' || cpus().length < 2) return false;
  try {
    execFileSync('taskset', ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

function pin(pid: number, cores: string): void {
  // -a: every thread (V8's helpers too), so the whole process moves.
  execFileSync('taskset', ['-a', '-p', '-c', cores, String(pid)], { stdio: 'ignore' });
}

/** Pins a call path (client first, then each process a message passes through) as `placement` says. */
export function place(chain: readonly number[], placement: Placement, core: 0 | 1): void {
  chain.forEach((pid, i) => pin(pid, String(placement === 'one core' ? core : (core + i) % 2)));
}

/** Lets the processes run on every core again. */
export function unpinAll(pids: Iterable<number>): void {
  const all = `0-${cpus().length - 1}`;
  for (const pid of new Set(pids)) {
    try {
      pin(pid, all);
    } catch {
      // The process has ended.
    }
  }
}

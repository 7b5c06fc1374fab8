import { mkdir, rmdir, stat, unlink } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import lockfile, { type LockOptions as LockOptionsOfLibrary } from 'proper-lockfile';
import type { Logger } from '../log.js';
import { errnoCode, reasonOf } from './errno.js';

/**
 * How long an update waits for another process's lock before failing: longer than the stale age, so a lock left
 * by a crashed process is always broken before an update gives up.
 */
export const DEFAULT_LOCK_TIMEOUT_MS = 10_000;
/**
 * Age after which a lock is broken: a live holder refreshes its lock's mtime every half of this (and an update
 * holds it for milliseconds), so only a crashed or frozen holder's lock gets this old.
 */
export const DEFAULT_LOCK_STALE_MS = 5_000;

export interface LockOptions {
  /** How long to wait for the lock before failing; default 10 s. */
  lockTimeoutMs?: number;
  /** A lock not refreshed for this long is broken (its holder crashed or froze); default 5 s, at least 2 s. */
  lockStaleMs?: number;
}

// ---------------------------------------------------------------------------------------------------------------
// Lock

export interface LockAcquireOptions {
  timeoutMs: number;
  staleMs: number;
  log: Logger;
  /** false in the watcher, so a wait for the lock never keeps the process alive. */
  ref: boolean;
  /** What the lock guards, for messages: "the tool state", "the OAuth tokens". */
  subject: string;
  /**
   * The error to throw when the lock cannot be had: `problem` says what failed and what to do (it names the lock),
   * `cause` is the system error behind it (none for a timeout). The owner of the file words it for its file.
   */
  failure(problem: string, cause?: unknown): Error;
}

/**
 * proper-lockfile's own stale check is switched off with this age: it lets two processes that saw the same stale lock
 * both take it (moxystudio/node-proper-lockfile issue 121; a test here lost updates that way), so breaking is ours.
 */
const NEVER_STALE = 2 ** 31 - 1;

/**
 * Takes the exclusive lock `<path>.lock` and returns its release. proper-lockfile creates it (a directory: `mkdir` is
 * atomic) and refreshes its mtime while it is held; a lock not refreshed for `staleMs` (its holder crashed or froze)
 * is broken by {@link breakIfStale}. The default timeout is longer than the stale age, so an update after a crash
 * waits instead of failing. Fails with the owner's {@link LockAcquireOptions.failure} when the lock cannot be created
 * (permissions) or is still held at the deadline.
 */
export async function acquireLock(path: string, options: LockAcquireOptions): Promise<() => Promise<void>> {
  const lockPath = `${path}.lock`;
  const deadline = Date.now() + options.timeoutMs;
  let compromised = false;
  const lockOptions: LockOptionsOfLibrary = {
    realpath: false, // the caller passes the real target, which may not exist yet
    stale: NEVER_STALE,
    update: Math.max(1_000, options.staleMs / 2),
    retries: 0, // retried below, against our deadline and with `ref`
    onCompromised: (error) => {
      // The library's default throws from a timer; here it means this holder froze past the stale age.
      compromised = true;
      options.log.warn(
        `The lock ${lockPath} was taken over by another process while this one held it (${reasonOf(error)}); ` +
          `a concurrent change to ${options.subject} may have been lost.`,
      );
    },
  };
  for (let attempt = 0; ; attempt++) {
    let release: (() => Promise<void>) | undefined;
    try {
      release = await lockfile.lock(path, lockOptions);
    } catch (error) {
      // ENOENT other than from mkdir: the lock vanished between the library's own steps; just try again.
      const vanished = errnoCode(error) === 'ENOENT' && (error as NodeJS.ErrnoException).syscall !== 'mkdir';
      if (errnoCode(error) !== 'ELOCKED' && !vanished) throw options.failure(`could not create the lock ${lockPath}: ${reasonOf(error)}`, error);
    }
    if (release) {
      const unlock = release;
      return async () => {
        await unlock().catch((error: unknown) => {
          if (!compromised) options.log.warn(`Could not remove the lock ${lockPath}: ${reasonOf(error)}. Delete it if it stays.`);
        });
      };
    }
    let broke: boolean;
    try {
      broke = await breakIfStale(lockPath, options.staleMs, options.log);
    } catch (error) {
      throw options.failure(`could not remove the stale lock ${lockPath}: ${reasonOf(error)}`, error);
    }
    if (broke) continue;
    if (Date.now() >= deadline) {
      throw options.failure(
        `timed out after ${options.timeoutMs} ms waiting for the lock ${lockPath}: another mcp-workbench process is ` +
          `probably changing ${options.subject}. Retry; if no such process is running, delete ${lockPath}`,
      );
    }
    // Random, slowly growing backoff so two contenders do not retry in lockstep.
    const wait = 2 + Math.random() * Math.min(48, 4 * (attempt + 1));
    await sleep(wait, undefined, { ref: options.ref });
  }
}

/**
 * Removes the lock if it has not been refreshed for `staleMs`; true when it did. Breakers serialise on a second
 * lock (`<lock>.break`) and look again under it, so of two processes that saw the same stale lock, the second finds
 * the fresh lock the first then took and leaves it alone. Also removes a stale lock *file*, as earlier versions
 * made.
 */
async function breakIfStale(lockPath: string, staleMs: number, log: Logger): Promise<boolean> {
  if (!(await isStale(lockPath, staleMs))) return false;
  const breakPath = `${lockPath}.break`;
  try {
    await mkdir(breakPath);
  } catch (error) {
    if (errnoCode(error) !== 'EEXIST') throw error;
    // A breaker that died mid-break would block everyone; its critical section is a few calls, so age is safe here.
    if (await isStale(breakPath, staleMs)) await rmdir(breakPath).catch(() => {});
    return false;
  }
  try {
    if (!(await isStale(lockPath, staleMs))) return false;
    await rmdir(lockPath).catch(async (error: unknown) => {
      if (errnoCode(error) === 'ENOTDIR') await unlink(lockPath);
      else if (errnoCode(error) !== 'ENOENT') throw error;
    });
    log.warn(`Removed the stale lock ${lockPath} (not refreshed for over ${Math.round(staleMs / 1000)} s: its holder crashed or froze).`);
    return true;
  } finally {
    await rmdir(breakPath).catch(() => {});
  }
}

async function isStale(path: string, staleMs: number): Promise<boolean> {
  try {
    return Date.now() - (await stat(path)).mtimeMs > staleMs;
  } catch (error) {
    if (errnoCode(error) === 'ENOENT') return false;
    throw error;
  }
}

/** The lock's settings: the caller's timeouts or the defaults, and who words its failures. */
export function lockOptions(
  options: LockOptions,
  log: Logger,
  ref: boolean,
  owner: Pick<LockAcquireOptions, 'subject' | 'failure'>,
): LockAcquireOptions {
  return {
    timeoutMs: options.lockTimeoutMs ?? DEFAULT_LOCK_TIMEOUT_MS,
    staleMs: options.lockStaleMs ?? DEFAULT_LOCK_STALE_MS,
    log,
    ref,
    ...owner,
  };
}

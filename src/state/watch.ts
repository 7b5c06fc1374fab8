import { setTimeout as sleep } from 'node:timers/promises';
import type { ToolState } from '../catalog/visibility.js';
import type { Logger } from '../log.js';
import { DEFAULT_WATCH_INTERVAL_MS, followFiles } from '../shared/file-watch.js';
import { OwnWrites } from '../shared/own-writes.js';
import type { StateFileError } from './file-errors.js';
import { reasonOf } from '../shared/errno.js';
import { type Snapshot, defaults, readSnapshot, warnExtras } from './read.js';

export { DEFAULT_WATCH_INTERVAL_MS };
/** How long the watcher waits before re-reading a file that looked broken (an editor may be mid-save). */
export const DEFAULT_WATCH_SETTLE_MS = 250;

/** A broken state file as a read found it. */
export interface BrokenState {
  problem: StateFileError;
  /** The file's content, when it could be read. */
  bytes?: Buffer;
}

export interface WatchToolStateOptions {
  /** Poll interval; default 300 ms. */
  intervalMs?: number;
  /** How long to wait before re-reading a file that looked broken or missing (an editor may be mid-save); default 250 ms. */
  settleMs?: number;
  /**
   * What the caller's own read found (e.g. `readToolState`): a state, or a broken file. The first poll is compared
   * against it, so a change between that read and this call is not missed. Without it, the first poll only sets the
   * baseline.
   */
  initial?: ToolState | BrokenState;
  /**
   * Called when the file turns broken (or, while broken, its content or problem changes), and with `undefined` once it
   * is good again — right after `onChange` delivered its state, which always happens then. Without it, a problem is
   * logged as a warning.
   */
  onProblem?: (broken: BrokenState | undefined) => void;
}

/** A running follow of the state file: see {@link watchToolState}. */
export interface ToolStateWatch {
  /** Stops polling: no `onChange` or `onProblem` after it returns. */
  close(): void;
  /**
   * The caller is about to change the file itself (a locked read-modify-write, `updateToolState`): until the function
   * returned is called — with the state the file then says and the caller applied, or with nothing when it wrote
   * nothing — no read is acted on, and a read that was under way meanwhile is dropped and done again (it may hold
   * content older than what the caller applied, or the caller's own content, which is no change to report). Calling
   * the returned function again does nothing.
   */
  ownWrite(): (saved: ToolState | undefined) => void;
}

/**
 * What the watcher tells of a change: the state now in force; whether the file is gone (the defaults); and the state
 * in force before — the last one delivered or saved by the caller's own write, undefined when there was none (a file
 * broken since start) — so a caller can name what a deleted file had disabled.
 */
export type ToolStateChanged = (state: ToolState, missing: boolean, previous: ToolState | undefined) => void;

/**
 * Follows the state file and calls `onChange` with the new state whenever its parsed content changes, whether it
 * was changed by another workbench process, `tools enable|disable`, or a text editor; typically within
 * `intervalMs` (+ a read). Works when the file or its directory does not exist yet, and across atomic renames.
 * Deleting the file means defaults (once it is still missing after `settleMs`: an editor may save by renaming), delivered
 * with `missing` true.
 * A file that does not parse or cannot be read is re-read once after `settleMs` (a half-saved edit); if it is still
 * broken, `onProblem` is told and `onChange` is not called: the caller fails closed until the file is good again
 * (README "Enabled and disabled tools"). The file is only ever read, never written or moved.
 * Never throws and never keeps the process alive; `close()` stops polling (no call after it returns).
 * Followed by polling, as every file the workbench follows (shared/file-watch.ts says why).
 */
export function watchToolState(
  path: string,
  onChange: ToolStateChanged,
  log: Logger,
  options: WatchToolStateOptions = {},
): ToolStateWatch {
  const watcher = new StateFileWatcher(path, onChange, log, options);
  const polling = followFiles([path], () => watcher.changed(), { log, intervalMs: options.intervalMs ?? DEFAULT_WATCH_INTERVAL_MS, what: path });
  return {
    close: () => {
      watcher.close();
      polling.close();
    },
    ownWrite: () => watcher.ownWrite(),
  };
}

/** The polling behind {@link watchToolState}: what was last seen, and what to do when it changes. */
class StateFileWatcher {
  private readonly settleMs: number;
  private closed = false;
  private broken: BrokenState | undefined;
  /** The last state delivered, saved by the caller, or given as `initial`: what is in force. */
  private last: ToolState | undefined;
  private lastExtras: string | undefined;
  private readonly ownWrites = new OwnWrites();

  constructor(
    private readonly path: string,
    private readonly onChange: ToolStateChanged,
    private readonly log: Logger,
    private readonly options: WatchToolStateOptions,
  ) {
    this.settleMs = options.settleMs ?? DEFAULT_WATCH_SETTLE_MS;
    const initial = options.initial;
    this.broken = initial && 'problem' in initial ? initial : undefined;
    this.last = initial && !('problem' in initial) ? initial : undefined;
    this.lastExtras = initial ? undefined : '';
  }

  close(): void {
    this.closed = true;
  }

  /** The file changed (or this is the first look): read it and act; false while it is still changing. */
  async changed(): Promise<boolean> {
    const mark = this.ownWrites.mark();
    const result = await this.readSettled();
    // The file is still changing, or the caller wrote it while this read was under way (what was read may be older
    // than what the caller applied): look again on the next poll.
    if (this.closed || result === 'retry' || this.ownWrites.overlapped(mark)) return false;
    if (result.kind === 'broken') this.reportProblem(result);
    else if (result.kind === 'missing') this.apply(defaults(), [], true);
    else this.apply(result.state, result.extraKeys, false);
    return true;
  }

  /** The file's settled content, or 'retry' while it is still changing. */
  private async readSettled(): Promise<Snapshot | 'retry'> {
    const snapshot = await readSnapshot(this.path);
    if (snapshot.kind === 'valid') return snapshot;
    // Missing or broken may be an editor's save in progress: look again before acting on it.
    await sleep(this.settleMs, undefined, { ref: false });
    if (this.closed) return 'retry';
    const again = await readSnapshot(this.path);
    if (again.kind === 'valid') return again;
    if (again.kind !== snapshot.kind) return 'retry';
    if (again.kind === 'broken' && snapshot.kind === 'broken' && !sameBroken(again, snapshot)) return 'retry';
    return again;
  }

  ownWrite(): (saved: ToolState | undefined) => void {
    const end = this.ownWrites.begin();
    return (saved) => {
      if (!end() || saved === undefined) return;
      this.last = saved;
      // The write read the file as good under the lock: whatever broken content was seen before is gone.
      const repaired = this.broken !== undefined;
      this.broken = undefined;
      if (repaired && !this.closed) this.options.onProblem?.(undefined);
    };
  }

  private reportProblem(next: BrokenState): void {
    if (this.broken && sameBroken(this.broken, next)) return;
    this.broken = next;
    if (this.options.onProblem) this.options.onProblem(next);
    else this.log.warn(`${next.problem.message} Nothing changes until it is good again (it is watched; no restart needed).${next.problem.local === undefined ? '' : `\n${next.problem.local}`}`);
  }

  private apply(state: ToolState, extraKeys: readonly string[], missing: boolean): void {
    const extrasKey = extraKeys.join('\0');
    if (this.lastExtras !== undefined && extrasKey !== this.lastExtras) warnExtras(this.path, extraKeys, this.log);
    this.lastExtras = extrasKey;
    const previous = this.last;
    const repaired = this.broken !== undefined;
    this.broken = undefined;
    // After a broken spell the state is always delivered: the caller may have had none at all.
    if (!repaired && (previous === undefined || stateKey(state) === stateKey(previous))) {
      this.last ??= state;
      return;
    }
    this.last = state;
    try {
      this.onChange(state, missing, previous);
    } catch (error) {
      this.log.error(`Applying the changed tool state from ${this.path} failed: ${reasonOf(error)}`);
    }
    if (repaired) this.options.onProblem?.(undefined);
  }
}

function sameBroken(a: BrokenState, b: BrokenState): boolean {
  if (a.problem.message !== b.problem.message) return false;
  return a.bytes === undefined || b.bytes === undefined ? a.bytes === b.bytes : a.bytes.equals(b.bytes);
}

function stateKey(state: ToolState): string {
  return JSON.stringify([state.enabled, state.disabled, state.exceptions ?? []]);
}

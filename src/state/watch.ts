import { stat } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import type { ToolState } from '../catalog/visibility.js';
import type { Logger } from '../log.js';
import { errnoCode, reasonOf } from './file-errors.js';
import type { LockOptions } from './lock.js';
import { type Extras, type Snapshot, defaults, readSnapshot, warnExtras } from './read.js';

/** Watcher poll interval: well inside the "about a second" a running server has to follow a change. */
export const DEFAULT_WATCH_INTERVAL_MS = 300;
/** How long the watcher waits before re-reading a file that looked corrupt (an editor may be mid-save). */
export const DEFAULT_WATCH_SETTLE_MS = 250;

export interface WatchToolStateOptions extends LockOptions {
  /** Poll interval; default 300 ms. */
  intervalMs?: number;
  /** How long to wait before re-reading a file that looked corrupt (an editor may be mid-save); default 250 ms. */
  settleMs?: number;
  /**
   * The state the caller already has (e.g. from `readToolState`). The first poll is compared against it, so a
   * change between that read and this call is not missed. Without it, the first poll only sets the baseline.
   */
  initial?: ToolState;
}

/**
 * Follows the state file and calls `onChange` with the new state whenever its parsed content changes, whether it
 * was changed by another workbench process, `tools enable|disable`, or a text editor; typically within
 * `intervalMs` (+ a read). Works when the file or its directory does not exist yet, and across atomic renames.
 * Deleting the file means defaults (once it is still missing after `settleMs`: an editor may save by renaming).
 * Fail-safe: a file that turns corrupt while this runs (a half-saved edit, a key written twice) is re-read once after
 * `settleMs`; if it is still corrupt, the last good state stays in force and a warning names the file, the problem
 * and the fix. The file is left in place (the user is editing it) and read again when it changes. An unreadable file
 * (EACCES, …) likewise keeps the last state. No read error ever re-enables a tool.
 * Never throws and never keeps the process alive; `close()` stops polling (no `onChange` after it returns).
 *
 * Polling rather than `fs.watch`: `fs.watch` on the file is lost when an atomic rename replaces the inode, watching
 * a directory that does not exist yet is impossible, and events are unreliable on network and container file
 * systems. A `stat` of one small file every 300 ms costs nothing measurable and meets "about a second".
 */
export function watchToolState(
  path: string,
  onChange: (state: ToolState) => void,
  log: Logger,
  options: WatchToolStateOptions = {},
): { close(): void } {
  const intervalMs = options.intervalMs ?? DEFAULT_WATCH_INTERVAL_MS;
  const settleMs = options.settleMs ?? DEFAULT_WATCH_SETTLE_MS;
  let closed = false;
  let timer: NodeJS.Timeout | undefined;
  let lastSignature: string | undefined;
  let lastKey = options.initial ? stateKey(options.initial) : undefined;
  let lastExtras: string | undefined = options.initial ? undefined : '';

  // Stat identity rather than content: unchanged files cost one stat per poll. ns times and the inode catch both
  // in-place edits and renames; ctime catches a same-size rewrite within one mtime tick on coarse file systems.
  const signatureOf = async (): Promise<string> => {
    try {
      const s = await stat(path, { bigint: true });
      return `${s.dev}:${s.ino}:${s.size}:${s.mtimeNs}:${s.ctimeNs}`;
    } catch (error) {
      return `error:${errnoCode(error) ?? 'unknown'}`;
    }
  };

  const readState = async (): Promise<{ state: ToolState; extras: Extras } | { corrupt: string } | 'retry' | 'unreadable'> => {
    let snapshot: Snapshot;
    try {
      snapshot = await readSnapshot(path);
    } catch (error) {
      log.warn(`${reasonOf(error)} Keeping the previous tool state.`);
      return 'unreadable';
    }
    if (snapshot.kind === 'valid') return snapshot;
    // Missing or corrupt may be an editor's save in progress: look again before acting on it.
    await sleep(settleMs, undefined, { ref: false });
    if (closed) return 'retry';
    const again = await readSnapshot(path).catch(() => undefined);
    if (!again || again.kind !== snapshot.kind) return 'retry';
    if (again.kind === 'missing') return { state: defaults(), extras: [] };
    if (again.kind !== 'corrupt' || snapshot.kind !== 'corrupt' || !again.bytes.equals(snapshot.bytes)) return 'retry';
    return { corrupt: again.reason };
  };

  const poll = async (): Promise<void> => {
    const signature = await signatureOf();
    if (signature === lastSignature) return;
    const result = await readState();
    if (closed || result === 'retry') return; // the file is still changing: look again on the next poll
    lastSignature = signature;
    if (result === 'unreadable') return;
    if ('corrupt' in result) {
      // Fail-safe: whatever the last good file disabled stays disabled until the file is fixed.
      const kept = lastKey === undefined ? 'the state it had at start-up' : 'the last good tool state read from it';
      log.warn(
        `Tool state file ${path} is corrupt (${result.corrupt}); keeping ${kept} in force, so nothing it disabled is ` +
          'enabled. Fix the file (it must be JSON like {"enabled": [], "disabled": []}, each key once), or run ' +
          '`mcp-workbench tools reset` to start over; the change is picked up as soon as the file is valid.',
      );
      return;
    }

    const extrasKey = result.extras.map(([k]) => k).join('\0');
    if (lastExtras !== undefined && extrasKey !== lastExtras) warnExtras(path, result.extras, log);
    lastExtras = extrasKey;

    const key = stateKey(result.state);
    if (lastKey === undefined) {
      lastKey = key;
      return;
    }
    if (key === lastKey) return;
    lastKey = key;
    try {
      onChange(result.state);
    } catch (error) {
      log.error(`Applying the changed tool state from ${path} failed: ${reasonOf(error)}`);
    }
  };

  const loop = (): void => {
    poll()
      .catch((error: unknown) => log.warn(`Watching ${path} failed once: ${reasonOf(error)}; will retry.`))
      .finally(() => {
        if (closed) return;
        // A chained timeout, not setInterval, so a slow poll (lock wait, slow disk) never overlaps the next one.
        timer = setTimeout(loop, intervalMs);
        timer.unref();
      });
  };
  loop();

  return {
    close() {
      closed = true;
      if (timer) clearTimeout(timer);
    },
  };
}

function stateKey(state: ToolState): string {
  return JSON.stringify([state.enabled, state.disabled]);
}

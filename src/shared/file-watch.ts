import { stat } from 'node:fs/promises';
import type { Logger } from '../log.js';
import { reasonOf } from './errno.js';

/** Poll interval: well inside the "about a second" a running server has to follow a change. */
export const DEFAULT_WATCH_INTERVAL_MS = 300;

export interface FollowFilesOptions {
  log: Logger;
  intervalMs?: number;
  /**
   * `read` (the default): the first poll counts as a change, so the caller compares what it loaded before against the
   * files as they are now and misses no edit made in between. `baseline`: the first poll only records the files.
   */
  first?: 'read' | 'baseline';
  /** Names the files in the log line of a failed poll. */
  what?: string;
}

/**
 * The one way the workbench follows files it reads while it runs (the config and project file, the tool state file,
 * the pins file): each followed set is polled by its files' identities (see {@link fileSignature}) every
 * `intervalMs`, and `onChange` runs after a poll that saw them change — never two at a time for one set. `onChange`
 * returns false when what it read was still settling (an editor mid-save): the change is then looked at again on the
 * next poll. Never throws, never keeps the process alive; `close()` stops it (no `onChange` starts after it returns).
 *
 * Polling rather than `fs.watch`: a watch on a file is lost when an editor's atomic rename replaces its inode, a
 * directory that does not exist yet cannot be watched, and events are unreliable on network and container file
 * systems. A `stat` of a few small files every 300 ms costs nothing measurable.
 */
export function followFiles(paths: readonly string[], onChange: () => Promise<boolean | void>, options: FollowFilesOptions): { close(): void } {
  const intervalMs = options.intervalMs ?? DEFAULT_WATCH_INTERVAL_MS;
  let closed = false;
  let timer: NodeJS.Timeout | undefined;
  let last: string | undefined;
  let first = true;
  const poll = async (): Promise<void> => {
    const signature = (await Promise.all(paths.map(fileSignature))).join('\n');
    const baselineOnly = first && options.first === 'baseline';
    first = false;
    if (baselineOnly) last = signature;
    if (signature === last || closed) return;
    if ((await onChange()) !== false) last = signature;
  };
  const loop = (): void => {
    poll()
      .catch((error: unknown) => options.log.warn(`Watching ${options.what ?? paths.join(', ')} failed once: ${reasonOf(error)}; will retry.`))
      .finally(() => {
        if (closed) return;
        timer = setTimeout(loop, intervalMs);
        timer.unref();
      });
  };
  loop();
  return {
    close() {
      closed = true;
      clearTimeout(timer);
    },
  };
}

/**
 * A file's identity for polling: stat fields rather than content, so an unchanged file costs one stat per poll. ns
 * times and the inode catch both in-place edits and renames; ctime catches a same-size rewrite within one mtime tick
 * on coarse file systems. A missing or unreadable file has a signature too (its error code).
 */
export async function fileSignature(path: string): Promise<string> {
  try {
    const s = await stat(path, { bigint: true });
    return `${s.dev}:${s.ino}:${s.size}:${s.mtimeNs}:${s.ctimeNs}`;
  } catch (error) {
    return `error:${(error as NodeJS.ErrnoException | undefined)?.code ?? 'unknown'}`;
  }
}

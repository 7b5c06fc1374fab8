import { readFile } from 'node:fs/promises';
import type { Logger } from '../log.js';
import { followFiles } from '../shared/file-watch.js';

/** How long to wait after the last change event before reloading: editors write a file in several steps. */
export const DEFAULT_RELOAD_DEBOUNCE_MS = 150;

export interface WatchConfigFilesOptions {
  /** Absolute paths of the files to follow (the config, the project file); they need not exist. */
  files: readonly string[];
  /**
   * Loads and applies the files' current content; throws when it is invalid (the caller keeps the previous config).
   * Called at most once at a time.
   */
  apply(): Promise<void>;
  /**
   * The files' content the running config was loaded from ({@link snapshotFiles} taken before loading). The watcher
   * compares against it once at start, so an edit made while the workbench was starting is not missed.
   */
  baseline: string;
  /** Reports a failed {@link WatchConfigFilesOptions.apply}. */
  onInvalid(error: unknown): void;
  log: Logger;
  debounceMs?: number;
}

/**
 * Follows the config and project files while the workbench runs, and calls `apply` after a change that altered
 * their bytes. They are polled like every file the workbench follows (shared/file-watch.ts), which also sees an
 * editor's save by rename (vim, VS Code) and a file that does not exist yet. A change is acted on `debounceMs` after
 * it is seen (editors write a file in several steps), and changes during an `apply` lead to one more.
 * Reading is all it ever does to the files: nothing the user wrote is rewritten. Never keeps the process alive and
 * never throws; `close()` stops it (no `apply` starts after it returns).
 */
export function watchConfigFiles(options: WatchConfigFilesOptions): { close(): void } {
  const debounceMs = options.debounceMs ?? DEFAULT_RELOAD_DEBOUNCE_MS;
  let closed = false;
  let timer: NodeJS.Timeout | undefined;

  // The content the running config came from; a change event that leaves the bytes as they were does nothing.
  let lastSeen = options.baseline;

  const run = async (): Promise<void> => {
    const now = await snapshotFiles(options.files);
    if (closed || now === lastSeen) return;
    lastSeen = now;
    try {
      await options.apply();
    } catch (error) {
      options.onInvalid(error);
    }
  };
  const trigger = oneAtATime(run, options.log, () => closed);

  const schedule = (): void => {
    if (closed) return;
    clearTimeout(timer);
    timer = setTimeout(trigger, debounceMs);
    timer.unref();
  };

  const polling = followFiles(
    options.files,
    async () => {
      schedule();
    },
    { log: options.log, first: 'baseline', what: options.files.join(', ') },
  );

  // Anything that changed between the caller's snapshot and now.
  schedule();

  return {
    close() {
      closed = true;
      clearTimeout(timer);
      polling.close();
    },
  };
}

/**
 * A trigger for `run` that never overlaps it: a trigger during a run leads to one more run after it (unless closed
 * by then). A failed run is logged as a warning.
 */
function oneAtATime(run: () => Promise<void>, log: Logger, closed: () => boolean): () => void {
  let running: Promise<void> | undefined;
  let again = false;
  const trigger = (): void => {
    if (running) {
      again = true;
      return;
    }
    running = run()
      .catch((error: unknown) => log.warn(`following config changes failed once: ${String(error)}`))
      .finally(() => {
        running = undefined;
        if (again && !closed()) {
          again = false;
          trigger();
        }
      });
  };
  return trigger;
}

/** The files' current content as one comparable string (a missing or unreadable file counts as its error code). */
export async function snapshotFiles(files: readonly string[]): Promise<string> {
  const texts = await Promise.all(files.map((file) => readFile(file, 'utf8').catch((error: NodeJS.ErrnoException) => `\0${error.code ?? 'error'}`)));
  return JSON.stringify(texts);
}

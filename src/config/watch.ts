import { watch, type FSWatcher } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { basename, dirname } from 'node:path';
import type { Logger } from '../log.js';

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
 * their bytes. Watches the files' directories rather than the files: editors such as vim and VS Code save by writing
 * a temporary file and renaming it over the original, which replaces the inode a file watch would be attached to.
 * Events are debounced; a burst of them ends in one `apply`, and changes during an `apply` lead to one more.
 * Reading is all it ever does to the files: nothing the user wrote is rewritten. Never keeps the process alive and
 * never throws; `close()` stops it (no `apply` starts after it returns).
 */
export function watchConfigFiles(options: WatchConfigFilesOptions): { close(): void } {
  const debounceMs = options.debounceMs ?? DEFAULT_RELOAD_DEBOUNCE_MS;
  const names = new Map<string, Set<string>>();
  for (const file of options.files) {
    const dir = dirname(file);
    if (!names.has(dir)) names.set(dir, new Set());
    names.get(dir)!.add(basename(file));
  }
  let closed = false;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | undefined;
  let again = false;
  const watchers: FSWatcher[] = [];

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

  const trigger = (): void => {
    if (running) {
      again = true;
      return;
    }
    running = run()
      .catch((error: unknown) => options.log.warn(`following config changes failed once: ${String(error)}`))
      .finally(() => {
        running = undefined;
        if (again && !closed) {
          again = false;
          trigger();
        }
      });
  };

  const schedule = (): void => {
    if (closed) return;
    clearTimeout(timer);
    timer = setTimeout(trigger, debounceMs);
    timer.unref();
  };

  for (const [dir, files] of names) {
    try {
      const watcher = watch(dir, { persistent: false }, (_event, filename) => {
        // Some platforms omit the name; then any change in the directory may be ours.
        if (filename === null || files.has(filename.toString())) schedule();
      });
      watcher.on('error', (error) => options.log.warn(`stopped following changes in ${dir}: ${error.message}; restart the workbench to apply later edits`));
      watchers.push(watcher);
    } catch (error) {
      options.log.warn(
        `cannot follow changes of ${[...files].join(', ')} in ${dir}: ${error instanceof Error ? error.message : String(error)}; restart the workbench to apply edits`,
      );
    }
  }

  // Anything that changed between the caller's snapshot and now.
  schedule();

  return {
    close() {
      closed = true;
      clearTimeout(timer);
      for (const watcher of watchers) watcher.close();
    },
  };
}

/** The files' current content as one comparable string (a missing or unreadable file counts as its error code). */
export async function snapshotFiles(files: readonly string[]): Promise<string> {
  const texts = await Promise.all(files.map((file) => readFile(file, 'utf8').catch((error: NodeJS.ErrnoException) => `\0${error.code ?? 'error'}`)));
  return JSON.stringify(texts);
}

import { lstat, readFile, realpath, rename } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import type { ToolState } from '../catalog/visibility.js';
import { formatJsonPath } from '../config/expand-env.js';
import { parseJsonText } from '../config/parse-json.js';
import { WorkbenchError } from '../errors.js';
import type { Logger } from '../log.js';
import { errnoCode, reasonOf } from './file-errors.js';
import { type LockAcquireOptions, type LockOptions, acquireLock, lockOptions } from './lock.js';

/**
 * The persisted enabled/disabled state (README, "Enabled and disabled tools"): where it lives (path.ts), how it is
 * read and repaired (here), locked (lock.ts), changed (update.ts) and followed (watch.ts).
 *
 * Files next to the state file `tool-state.json`:
 * - `tool-state.json.lock/`           proper-lockfile's lock directory for read-modify-write (mtime = heartbeat)
 * - `tool-state.json.lock.break/`     short-lived lock serialising the breaking of a stale lock
 * - `tool-state.json.<hash>`          write-file-atomic's temp file while a write is in flight (removed on failure)
 * - `tool-state.json.corrupt-<time>`  a corrupt file moved aside, bytes untouched
 */

export const defaults = (): ToolState => ({ enabled: [], disabled: [] });

// ---------------------------------------------------------------------------------------------------------------
// Parsing

export type Extras = [key: string, value: unknown][];

export type Snapshot =
  | { kind: 'missing' }
  | { kind: 'valid'; state: ToolState; extras: Extras; bytes: Buffer }
  | { kind: 'corrupt'; reason: string; bytes: Buffer };

/** Trimmed, blanks dropped, first occurrence kept. */
export function normalizeNames(names: readonly string[]): string[] {
  const seen = new Set<string>();
  for (const raw of names) {
    const name = raw.trim();
    if (name !== '') seen.add(name);
  }
  return [...seen];
}

function parseState(bytes: Buffer): Snapshot {
  // Editors on Windows may prepend a BOM; JSON.parse rejects it although the content is fine.
  const text = bytes.toString('utf8').replace(/^\uFEFF/, '');
  let value: unknown;
  try {
    const document = parseJsonText(text);
    value = document.value;
    // The same rule as the config: a key written twice is an error, never "the last one wins" in silence.
    if (document.duplicateKeys.length > 0) {
      return { kind: 'corrupt', reason: `key written twice: ${document.duplicateKeys.map(formatJsonPath).join(', ')}`, bytes };
    }
  } catch (error) {
    return { kind: 'corrupt', reason: `invalid JSON (${(error as Error).message})`, bytes };
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return { kind: 'corrupt', reason: 'expected a JSON object like {"enabled": [], "disabled": []}', bytes };
  }
  const object = value as Record<string, unknown>;
  const lists: { enabled: string[]; disabled: string[] } = { enabled: [], disabled: [] };
  for (const key of ['enabled', 'disabled'] as const) {
    if (!Object.hasOwn(object, key)) continue;
    const list = object[key];
    if (!Array.isArray(list) || !list.every((item): item is string => typeof item === 'string')) {
      return { kind: 'corrupt', reason: `"${key}" must be an array of strings`, bytes };
    }
    lists[key] = normalizeNames(list);
  }
  // Kept as entries, not copied onto a plain object: a "__proto__" key would otherwise set a prototype.
  const extras = Object.entries(object).filter(([key]) => key !== 'enabled' && key !== 'disabled');
  return { kind: 'valid', state: lists, extras, bytes };
}

/** `missing` also when a parent is not a directory: nothing is there, and a write will explain the problem. */
export async function readSnapshot(path: string): Promise<Snapshot> {
  let bytes: Buffer;
  try {
    bytes = await readFile(path);
  } catch (error) {
    const code = errnoCode(error);
    if (code === 'ENOENT' || code === 'ENOTDIR') return { kind: 'missing' };
    throw new WorkbenchError(
      'STATE_UNREADABLE',
      `Cannot read the tool state file ${path}: ${reasonOf(error)}. Fix its permissions, or point --state-file / ` +
        `WORKBENCH_STATE_FILE at another file.`,
      { cause: error },
    );
  }
  return parseState(bytes);
}

export function serialize(state: ToolState, extras: Extras): string {
  // Object.fromEntries defines own properties, so a preserved "__proto__" key round-trips as data.
  const object = Object.fromEntries<unknown>([
    ['enabled', [...state.enabled]],
    ['disabled', [...state.disabled]],
    ...extras,
  ]);
  return `${JSON.stringify(object, null, 2)}\n`;
}

export function warnExtras(path: string, extras: Extras, log: Logger): void {
  if (extras.length === 0) return;
  const keys = extras.map(([k]) => JSON.stringify(k)).join(', ');
  log.warn(`Tool state file ${path} has unknown key(s) ${keys}; they are ignored here and kept on the next write.`);
}

// ---------------------------------------------------------------------------------------------------------------
// File operations

/**
 * The file to lock and replace: a symlinked state file (e.g. a dotfiles manager's link) is followed, so the link
 * survives the rename and every process locks the same real file whichever path it was given.
 */
export async function realTarget(path: string): Promise<string> {
  const absolute = resolve(path);
  try {
    return await realpath(absolute);
  } catch {
    try {
      return join(await realpath(dirname(absolute)), basename(absolute));
    } catch {
      return absolute;
    }
  }
}

/** Moves a corrupt file aside without ever replacing an earlier copy; the caller holds the lock. */
export async function moveAside(path: string): Promise<string> {
  const stamp = new Date().toISOString().replace(/:/g, '-');
  let target = `${path}.corrupt-${stamp}`;
  for (let n = 2; await exists(target); n++) target = `${path}.corrupt-${stamp}-${n}`;
  await rename(path, target);
  return target;
}

async function exists(path: string): Promise<boolean> {
  try {
    await lstat(path);
    return true;
  } catch {
    return false;
  }
}

export function corruptWarning(path: string, reason: string, movedTo: string): string {
  return (
    `Tool state file ${path} is corrupt (${reason}); moved it aside to ${movedTo} and using the defaults ` +
    `(no tool disabled by the state file). Inspect that copy and re-apply what you need.`
  );
}

/**
 * Under the lock, re-reads a file that looked corrupt and moves it aside if it still is (another process may have
 * replaced it meanwhile; moving without the lock could move *their* fresh file aside). Never throws for the
 * corruption itself: when it cannot be moved, warns and returns the defaults.
 */
async function recoverCorrupt(path: string, log: Logger, lock: LockAcquireOptions): Promise<ToolState> {
  const target = await realTarget(path);
  let release: (() => Promise<void>) | undefined;
  try {
    release = await acquireLock(target, lock);
    const snapshot = await readSnapshot(target);
    if (snapshot.kind === 'missing') return defaults();
    if (snapshot.kind === 'valid') {
      warnExtras(path, snapshot.extras, log);
      return snapshot.state;
    }
    const movedTo = await moveAside(target);
    log.warn(corruptWarning(path, snapshot.reason, movedTo));
    return defaults();
  } catch (error) {
    log.warn(
      `Tool state file ${path} is corrupt and could not be moved aside (${reasonOf(error)}); using the defaults ` +
        `(no tool disabled by the state file). Fix or remove the file.`,
    );
    return defaults();
  } finally {
    await release?.();
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Public API

/**
 * Reads the state file. Missing file → defaults `{ enabled: [], disabled: [] }`, silently. Corrupt (not JSON, or not
 * `{ enabled?: string[], disabled?: string[] }`) → the file is moved aside to `<path>.corrupt-<timestamp>` with its
 * bytes intact, a warning names both paths, and the defaults are returned; if it cannot be moved the warning says
 * so and the defaults are still returned. Unknown extra keys are warned about and ignored. List entries come back
 * trimmed, without blanks or duplicates.
 *
 * @throws WorkbenchError `STATE_UNREADABLE` when the file exists but cannot be read (e.g. EACCES, or it is a
 *   directory): returning the defaults then could silently re-enable tools the user disabled.
 */
export async function readToolState(path: string, log: Logger, options: LockOptions = {}): Promise<ToolState> {
  const snapshot = await readSnapshot(path);
  if (snapshot.kind === 'missing') return defaults();
  if (snapshot.kind === 'valid') {
    warnExtras(path, snapshot.extras, log);
    return snapshot.state;
  }
  return recoverCorrupt(path, log, lockOptions(options, log, true));
}

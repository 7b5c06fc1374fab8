import { lstat, mkdir, readFile, realpath, rename, rmdir, stat, unlink } from 'node:fs/promises';
import { basename, dirname, isAbsolute, join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import lockfile, { type LockOptions as LockOptionsOfLibrary } from 'proper-lockfile';
import writeFileAtomic from 'write-file-atomic';
import { formatJsonPath } from '../config/expand-env.js';
import { parseJsonText } from '../config/parse-json.js';
import { WorkbenchError } from '../errors.js';
import type { Logger } from '../log.js';
import { compileGlob } from '../shared/glob.js';
import { parseToolName } from '../catalog/names.js';
import type { ToolState } from '../catalog/visibility.js';

/**
 * The persisted enabled/disabled state (README, "Enabled and disabled tools"): where it lives, how it is read,
 * changed and followed.
 *
 * Files next to the state file `tool-state.json`:
 * - `tool-state.json.lock/`           proper-lockfile's lock directory for read-modify-write (mtime = heartbeat)
 * - `tool-state.json.lock.break/`     short-lived lock serialising the breaking of a stale lock
 * - `tool-state.json.<hash>`          write-file-atomic's temp file while a write is in flight (removed on failure)
 * - `tool-state.json.corrupt-<time>`  a corrupt file moved aside, bytes untouched
 */

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
/** Watcher poll interval: well inside the "about a second" a running server has to follow a change. */
export const DEFAULT_WATCH_INTERVAL_MS = 300;
/** How long the watcher waits before re-reading a file that looked corrupt (an editor may be mid-save). */
export const DEFAULT_WATCH_SETTLE_MS = 250;

export interface LockOptions {
  /** How long to wait for the lock before failing; default 10 s. */
  lockTimeoutMs?: number;
  /** A lock not refreshed for this long is broken (its holder crashed or froze); default 5 s, at least 2 s. */
  lockStaleMs?: number;
}

const defaults = (): ToolState => ({ enabled: [], disabled: [] });

// ---------------------------------------------------------------------------------------------------------------
// Path resolution

/**
 * The state file to use: `--state-file`, else `WORKBENCH_STATE_FILE`, else `<homedir>/.mcp-workbench/tool-state.json`.
 * Blank values count as unset (so `WORKBENCH_STATE_FILE=` falls through). A leading `~` is expanded to `homedir`
 * because values from JSON client configs never pass through a shell; relative paths resolve against `cwd`
 * (default: the process's). Pure: never touches the file system.
 */
export function resolveStatePath(options: {
  flag?: string;
  env: Record<string, string | undefined>;
  homedir: string;
  cwd?: string;
}): string {
  const explicit = [options.flag, options.env.WORKBENCH_STATE_FILE].map((v) => v?.trim()).find((v) => !!v);
  if (!explicit) return join(options.homedir, '.mcp-workbench', 'tool-state.json');
  const expanded = explicit === '~' || /^~[/\\]/.test(explicit) ? join(options.homedir, explicit.slice(1)) : explicit;
  return isAbsolute(expanded) ? expanded : resolve(options.cwd ?? process.cwd(), expanded);
}

// ---------------------------------------------------------------------------------------------------------------
// Parsing

type Extras = [key: string, value: unknown][];

type Snapshot =
  | { kind: 'missing' }
  | { kind: 'valid'; state: ToolState; extras: Extras; bytes: Buffer }
  | { kind: 'corrupt'; reason: string; bytes: Buffer };

/** Trimmed, blanks dropped, first occurrence kept. */
function normalizeNames(names: readonly string[]): string[] {
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
async function readSnapshot(path: string): Promise<Snapshot> {
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

function serialize(state: ToolState, extras: Extras): string {
  // Object.fromEntries defines own properties, so a preserved "__proto__" key round-trips as data.
  const object = Object.fromEntries<unknown>([
    ['enabled', [...state.enabled]],
    ['disabled', [...state.disabled]],
    ...extras,
  ]);
  return `${JSON.stringify(object, null, 2)}\n`;
}

function warnExtras(path: string, extras: Extras, log: Logger): void {
  if (extras.length === 0) return;
  const keys = extras.map(([k]) => JSON.stringify(k)).join(', ');
  log.warn(`Tool state file ${path} has unknown key(s) ${keys}; they are ignored here and kept on the next write.`);
}

// ---------------------------------------------------------------------------------------------------------------
// Errors

function errnoCode(error: unknown): string | undefined {
  return (error as NodeJS.ErrnoException | undefined)?.code;
}

function reasonOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

function unwritable(path: string, action: string, error: unknown): WorkbenchError {
  const code = errnoCode(error);
  const fix =
    code === 'ENOSPC' || code === 'EDQUOT'
      ? `Free some disk space`
      : code === 'ENOTDIR' || code === 'EEXIST' || code === 'EISDIR'
        ? `Make sure every parent of ${path} is a directory and the path itself is not one`
        : `Fix the permissions of ${dirname(path)}`;
  return new WorkbenchError(
    'STATE_UNWRITABLE',
    `Cannot change the tool state file ${path}: could not ${action}: ${reasonOf(error)}. The state was not ` +
      `changed. ${fix}, or ` +
      `point --state-file / WORKBENCH_STATE_FILE at a writable location.`,
    { cause: error },
  );
}

// ---------------------------------------------------------------------------------------------------------------
// Lock

interface LockAcquireOptions {
  timeoutMs: number;
  staleMs: number;
  log: Logger;
  /** false in the watcher, so a wait for the lock never keeps the process alive. */
  ref: boolean;
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
 * waits instead of failing. Fails with STATE_UNWRITABLE when the lock cannot be created (permissions) or is still
 * held at the deadline.
 */
async function acquireLock(path: string, options: LockAcquireOptions): Promise<() => Promise<void>> {
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
          `a concurrent change to the tool state may have been lost.`,
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
      if (errnoCode(error) !== 'ELOCKED' && !vanished) throw unwritable(path, `create the lock ${lockPath}`, error);
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
      throw unwritable(path, `remove the stale lock ${lockPath}`, error);
    }
    if (broke) continue;
    if (Date.now() >= deadline) {
      throw new WorkbenchError(
        'STATE_UNWRITABLE',
        `Timed out after ${options.timeoutMs} ms waiting for the lock ${lockPath}. The state was not changed. ` +
          `Another mcp-workbench process is probably changing the tool state: retry. If no such process is ` +
          `running, delete ${lockPath}.`,
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

// ---------------------------------------------------------------------------------------------------------------
// File operations

/**
 * The file to lock and replace: a symlinked state file (e.g. a dotfiles manager's link) is followed, so the link
 * survives the rename and every process locks the same real file whichever path it was given.
 */
async function realTarget(path: string): Promise<string> {
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
async function moveAside(path: string): Promise<string> {
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

function corruptWarning(path: string, reason: string, movedTo: string): string {
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

export interface ToolStateChange {
  /** Names to enable: removed from `disabled`; added to `enabled` only while that is a non-empty allowlist. */
  enable?: readonly string[];
  /** Names to disable: added to `disabled`, removed from `enabled` (unless that would empty the allowlist). */
  disable?: readonly string[];
  /** Start from the defaults (applied before `enable` and `disable`). Unknown extra keys are still kept. */
  reset?: boolean;
}

export interface UpdateToolStateOptions extends LockOptions {
  log: Logger;
  /**
   * Whether a name (canonical or glob, as given) refers to something that exists; names it rejects are kept anyway
   * and listed in `unknown` so the caller can warn. Not called when omitted.
   */
  knownNames?: (name: string) => boolean;
}

export interface ToolStateUpdate {
  /** The state now on disk. */
  state: ToolState;
  /** The state before this update (defaults if the file was missing or corrupt). */
  previous: ToolState;
  /**
   * Names whose change had an effect on the file: `enabled` for enable (or, with reset, the `disabled` entries that
   * were cleared), `disabled` for disable. A name already in the requested state is not listed.
   */
  changed: { enabled: string[]; disabled: string[] };
  /** Requested names for which `knownNames` returned false. */
  unknown: string[];
  /**
   * Enabled names that a remaining `disabled` pattern still covers, wholly or in part (e.g. enabling
   * `dev__s__t` while `disabled` holds `dev__*`). Disabled always wins, so these stay hidden; the user's pattern
   * is not rewritten.
   */
  stillDisabledBy: { name: string; pattern: string }[];
  /** Where a corrupt file found during the update was moved; the update was applied to the defaults. */
  movedAside?: string;
}

/**
 * Applies `change` as one atomic read-modify-write under an exclusive lock (`<path>.lock`), so concurrent updates
 * from several processes never lose one another's changes. Input names are trimmed, blanks dropped, duplicates
 * removed; each must be a canonical `toolbox__server__tool` name or a glob with `*` or `?`. Order: reset, enable,
 * disable (so a name in both ends up disabled, like the rule "disabled always wins"). The file is always rewritten
 * in the canonical format (2-space JSON, trailing newline, `enabled`, `disabled`, then preserved unknown keys); its
 * directory is created if needed. A corrupt file is moved aside first (see `movedAside`).
 *
 * @throws WorkbenchError `INVALID_NAME` for a name that is neither canonical nor a glob (nothing is written).
 * @throws WorkbenchError `STATE_UNWRITABLE` when the directory, lock or file cannot be created, read or replaced,
 *   or the lock stays held by a live process past the timeout; the message names the path, the OS reason and the
 *   fix. The previous file is then left untouched.
 */
export async function updateToolState(
  path: string,
  change: ToolStateChange,
  options: UpdateToolStateOptions,
): Promise<ToolStateUpdate> {
  const { log } = options;
  const enable = normalizeNames(change.enable ?? []);
  const disable = normalizeNames(change.disable ?? []);
  const invalid = [...enable, ...disable].filter((name) => !/[*?]/.test(name) && !parseToolName(name));
  if (invalid.length > 0) {
    throw new WorkbenchError(
      'INVALID_NAME',
      `Not a tool name: ${invalid.map((n) => JSON.stringify(n)).join(', ')}. Use the canonical ` +
        `toolbox__server__tool form, or a glob such as "${invalid[0]}__*".`,
      { details: invalid.map((n) => `"${n}" is neither toolbox__server__tool nor a pattern with * or ?`) },
    );
  }
  const known = options.knownNames;
  const unknown = known ? [...new Set([...enable, ...disable])].filter((name) => !known(name)) : [];

  const target = await realTarget(path);
  try {
    await mkdir(dirname(target), { recursive: true });
  } catch (error) {
    throw unwritable(path, `create the directory ${dirname(target)}`, error);
  }
  const release = await acquireLock(target, lockOptions(options, log, true));
  try {
    const snapshot = await readSnapshot(target);
    let movedAside: string | undefined;
    if (snapshot.kind === 'corrupt') {
      try {
        movedAside = await moveAside(target);
      } catch (error) {
        throw unwritable(path, 'move the corrupt file aside', error);
      }
      log.warn(corruptWarning(path, snapshot.reason, movedAside));
    }
    const previous = snapshot.kind === 'valid' ? snapshot.state : defaults();
    const extras = snapshot.kind === 'valid' ? snapshot.extras : [];
    if (snapshot.kind === 'valid') warnExtras(path, extras, log);

    const applied = applyChange(previous, { enable, disable, reset: change.reset === true });
    try {
      // temp file beside it + fsync + rename; the replacement keeps the old file's mode and owner.
      await writeFileAtomic(target, serialize(applied.state, extras));
    } catch (error) {
      throw unwritable(path, 'write the new content', error);
    }
    return { ...applied, previous, unknown, ...(movedAside === undefined ? {} : { movedAside }) };
  } finally {
    await release();
  }
}

function applyChange(
  previous: ToolState,
  change: { enable: string[]; disable: string[]; reset: boolean },
): Pick<ToolStateUpdate, 'state' | 'changed' | 'stillDisabledBy'> {
  const enabled = change.reset ? [] : [...previous.enabled];
  const disabled = change.reset ? [] : [...previous.disabled];
  const changed = { enabled: change.reset ? [...previous.disabled] : [], disabled: [] as string[] };

  for (const name of change.enable) {
    let effect = remove(disabled, name);
    // An empty list means "all": adding the name would silently turn it into an allowlist of one.
    if (enabled.length > 0 && !enabled.includes(name)) {
      enabled.push(name);
      effect = true;
    }
    if (effect && !changed.enabled.includes(name)) changed.enabled.push(name);
  }
  for (const name of change.disable) {
    if (!disabled.includes(name)) {
      disabled.push(name);
      changed.disabled.push(name);
    }
    // Removing the last allowlist entry would flip "only X" into "everything" (empty = all), i.e. disabling X would
    // enable every other tool. Keep it: disabled wins anyway, and the allowlist stays in force.
    if (enabled.length > 1 || enabled[0] !== name) remove(enabled, name);
  }

  const stillDisabledBy: ToolStateUpdate['stillDisabledBy'] = [];
  for (const name of change.enable) {
    const coversName = compileGlob(name);
    for (const pattern of disabled) {
      // Either the pattern matches the name, or (for a glob name) the name's glob covers a disabled entry.
      if (compileGlob(pattern)(name) || coversName(pattern)) stillDisabledBy.push({ name, pattern });
    }
  }
  return { state: { enabled, disabled }, changed, stillDisabledBy };
}

function remove(list: string[], name: string): boolean {
  const index = list.indexOf(name);
  if (index < 0) return false;
  list.splice(index, 1);
  return true;
}

function lockOptions(options: LockOptions, log: Logger, ref: boolean): LockAcquireOptions {
  return {
    timeoutMs: options.lockTimeoutMs ?? DEFAULT_LOCK_TIMEOUT_MS,
    staleMs: options.lockStaleMs ?? DEFAULT_LOCK_STALE_MS,
    log,
    ref,
  };
}

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

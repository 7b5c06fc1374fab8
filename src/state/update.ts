import writeFileAtomic from 'write-file-atomic';
import { parseToolName } from '../catalog/names.js';
import type { ToolState } from '../catalog/visibility.js';
import { WorkbenchError } from '../errors.js';
import type { Logger } from '../log.js';
import { compileGlob } from '../shared/glob.js';
import { TOOL_STATE_FILE, readOnlyFile, retell, unwritable } from './file-errors.js';
import { readOnlyReason } from '../shared/read-only.js';
import type { LockOptions } from '../shared/file-lock.js';
import { lockStateRoomFile } from './lock-file.js';
import { editStateText, replaceLists } from './edit.js';
import { defaults, normalizeNames, readSnapshot, serialize, warnExtras } from './read.js';

export interface ToolStateChange {
  /**
   * Names to enable: removed from `disabled`; added to `enabled` only while that is a non-empty allowlist. A canonical
   * name that a glob in `disabled` still covers is added to `exceptions`, so exactly that tool is enabled.
   */
  enable?: readonly string[];
  /**
   * Names to disable: added to `disabled`, removed from `enabled` (unless that would empty the allowlist); exceptions
   * they cover are removed (the newer wish wins).
   */
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
  /**
   * Called with the new state while the lock is still held, once the file says it (written, or already so): a running
   * workbench applies it there, so updates of several sessions apply in the order they were written, and its watcher
   * learns of its own write before anyone else can change the file again (watch.ts `ownWrite`).
   */
  onSaved?: (state: ToolState) => void;
}

export interface ToolStateUpdate {
  /** The state now on disk. */
  state: ToolState;
  /** The state before this update (defaults if the file was missing). */
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
  /** Canonical names enabled by a new entry in `exceptions`, each with the disabled glob(s) it is exempt from. */
  excepted: { name: string; patterns: string[] }[];
}

/**
 * `updateToolState` on the file of a running workbench, which applies what it saved at once (runtime.ts binds it);
 * `knownNames` as in {@link UpdateToolStateOptions}.
 */
export type BoundStateUpdate = (change: ToolStateChange, knownNames?: (name: string) => boolean) => Promise<ToolStateUpdate>;

/**
 * Applies `change` as one atomic read-modify-write under an exclusive lock (`<path>.lock`), so concurrent updates
 * from several processes never lose one another's changes. Input names are trimmed, blanks dropped, duplicates
 * removed; each must be a canonical `toolbox__server__tool` name or a glob with `*` or `?`. Order: reset, enable,
 * disable (so a name in both ends up disabled, like the rule "disabled always wins"). An existing file is changed in
 * place (edit.ts): comments, unknown keys and layout stay as the user wrote them. A new file gets the canonical
 * format (2-space JSON, trailing newline, `enabled` then `disabled`); its directory is created if needed.
 *
 * @throws WorkbenchError `INVALID_NAME` for a name that is neither canonical nor a glob (nothing is written).
 * @throws StateFileError `STATE_INVALID` / `STATE_UNREADABLE` when the file does not parse or cannot be read: it is
 *   never overwritten (the user's disabled tools may be in it); the message names the file, line:column and the fix.
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
  assertToolPatterns([...enable, ...disable]);
  const known = options.knownNames;
  const unknown = known ? [...new Set([...enable, ...disable])].filter((name) => !known(name)) : [];

  const { target, release } = await lockStateRoomFile(path, TOOL_STATE_FILE, options);
  try {
    const snapshot = await readSnapshot(target);
    if (snapshot.kind === 'broken') throw retell(snapshot.problem, path, 'Nothing was changed.');
    const previous = snapshot.kind === 'valid' ? snapshot.state : defaults();
    if (snapshot.kind === 'valid') warnExtras(path, snapshot.extraKeys, log);

    const applied = applyChange(previous, { enable, disable, reset: change.reset === true });
    const text = snapshot.kind === 'valid' ? editedText(path, snapshot, applied.state, log) : serialize(applied.state);
    // The file already says exactly this: nothing to write (a running workbench then has nothing to re-read).
    if (snapshot.kind === 'valid' && text === `${snapshot.bom ? '\uFEFF' : ''}${snapshot.text}`) {
      options.onSaved?.(applied.state);
      return { ...applied, previous, unknown };
    }
    // A rename replaces even a read-only file (the directory allows it): a file made read-only is left alone.
    const readOnly = snapshot.kind === 'valid' ? await readOnlyReason(target) : undefined;
    if (readOnly !== undefined) throw readOnlyFile(path, readOnly);
    try {
      // temp file beside it + fsync + rename; the replacement keeps the old file's mode and owner.
      await writeFileAtomic(target, text);
    } catch (error) {
      throw unwritable(path, 'write the new content', error);
    }
    options.onSaved?.(applied.state);
    return { ...applied, previous, unknown };
  } finally {
    await release();
  }
}

/**
 * Every name is a canonical `toolbox__server__tool` name or a glob with `*` or `?`.
 *
 * @throws WorkbenchError `INVALID_NAME` naming each one that is not, with a glob to use instead.
 */
export function assertToolPatterns(names: readonly string[]): void {
  const invalid = names.filter((name) => !/[*?]/.test(name) && !parseToolName(name));
  if (invalid.length > 0) {
    throw new WorkbenchError(
      'INVALID_NAME',
      `Not a tool name: ${invalid.map((n) => JSON.stringify(n)).join(', ')}. Use the canonical ` +
        `toolbox__server__tool form, or a glob such as "${invalid[0]}__*".`,
      { details: invalid.map((n) => `"${n}" is neither toolbox__server__tool nor a pattern with * or ?`) },
    );
  }
}

/** The file's text with its lists changed to `state`, everything else kept (see edit.ts). */
function editedText(path: string, snapshot: { text: string; bom: boolean }, state: ToolState, log: Logger): string {
  let edited = editStateText(snapshot.text, state);
  if (edited === undefined) {
    // Not expected (edit.ts checks its own result); the lists must still be right, so say what was dropped.
    edited = replaceLists(snapshot.text, state);
    log.warn(
      edited === undefined
        ? `Could not change ${path} in place; rewrote it in the canonical format, so its comments and unknown keys were dropped.`
        : `Could not change the entries of ${path} one by one; rewrote its two lists whole, so comments inside them were dropped.`,
    );
  }
  return `${snapshot.bom ? '\uFEFF' : ''}${edited ?? serialize(state)}`;
}

function applyChange(
  previous: ToolState,
  change: { enable: string[]; disable: string[]; reset: boolean },
): Pick<ToolStateUpdate, 'state' | 'changed' | 'stillDisabledBy' | 'excepted'> {
  const enabled = change.reset ? [] : [...previous.enabled];
  const disabled = change.reset ? [] : [...previous.disabled];
  const exceptions = change.reset ? [] : [...(previous.exceptions ?? [])];
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
    const covers = compileGlob(name);
    for (const exception of exceptions.filter((e) => covers(e))) remove(exceptions, exception);
  }

  const stillDisabledBy: ToolStateUpdate['stillDisabledBy'] = [];
  const excepted: ToolStateUpdate['excepted'] = [];
  for (const name of change.enable) {
    const coversName = compileGlob(name);
    const covering = disabled.filter((pattern) => compileGlob(pattern)(name) || coversName(pattern));
    // One tool under a disabled glob: record an exception rather than rewrite the user's glob. Only for a canonical
    // name, so an exception never enables more than the one tool that was named.
    if (covering.length > 0 && !isGlob(name) && covering.every(isGlob)) {
      if (!exceptions.includes(name)) {
        exceptions.push(name);
        excepted.push({ name, patterns: covering });
        if (!changed.enabled.includes(name)) changed.enabled.push(name);
      }
      continue;
    }
    // Either the pattern matches the name, or (for a glob name) the name's glob covers a disabled entry.
    for (const pattern of covering) stillDisabledBy.push({ name, pattern });
  }
  return { state: { enabled, disabled, ...(exceptions.length > 0 && { exceptions }) }, changed, stillDisabledBy, excepted };
}

const isGlob = (name: string): boolean => /[*?]/.test(name);

function remove(list: string[], name: string): boolean {
  const index = list.indexOf(name);
  if (index < 0) return false;
  list.splice(index, 1);
  return true;
}

import { lstat, readdir, readFile, writeFile } from 'node:fs/promises';
import { danglingLink, danglingLinkOn } from '../shared/dangling-link.js';
import { basename, dirname, join } from 'node:path';
import type { ToolState } from '../catalog/visibility.js';
import type { Logger } from '../log.js';
import { type StateFileError, invalidStateFile, unreadableStateFile } from './file-errors.js';
import { errnoCode, reasonOf } from '../shared/errno.js';
import { parseStateText } from './parse.js';
import { nonUtf8Byte } from '../config/parse-json.js';

export { normalizeNames } from './parse.js';

/**
 * The persisted enabled/disabled state (README, "Enabled and disabled tools"): where it lives (path.ts), how it is
 * parsed (parse.ts) and read (here), locked (lock.ts), changed in place (edit.ts, update.ts) and followed (watch.ts).
 * A read never writes, moves or renames anything.
 *
 * Files next to the state file `tool-state.json`:
 * - `tool-state.json.lock/`           proper-lockfile's lock directory for read-modify-write (mtime = heartbeat)
 * - `tool-state.json.lock.break/`     short-lived lock serialising the breaking of a stale lock
 * - `tool-state.json.<hash>`          write-file-atomic's temp file while a write is in flight (removed on failure)
 * - `tool-state.json.corrupt-<time>`  a copy of a broken file that `serve` found (one per distinct content)
 */

export const defaults = (): ToolState => ({ enabled: [], disabled: [] });

export type Snapshot =
  | { kind: 'missing' }
  | {
      kind: 'valid';
      state: ToolState;
      /** Top-level keys other than the two lists (ignored, kept by writes). */
      extraKeys: string[];
      /** The text without a byte-order mark, for edits in place. */
      text: string;
      bom: boolean;
    }
  | { kind: 'broken'; problem: StateFileError; /** the file's content, when it could be read */ bytes?: Buffer };

/**
 * Reads and parses the file. Never throws: a file that cannot be read or does not parse is `broken`, with the
 * problem. Only a path where nothing is is `missing` (the defaults): a path missing behind a symbolic link whose
 * target is gone (the file's, or a folder's on its path: a moved dotfiles folder) is `broken`, since the disables the
 * file held are somewhere.
 */
export async function readSnapshot(path: string): Promise<Snapshot> {
  let bytes: Buffer;
  try {
    bytes = await readFile(path);
  } catch (error) {
    const code = errnoCode(error);
    const dangling = code === 'ENOENT' ? await danglingLinkOn(path) : undefined;
    // A parent that is not a directory: nothing can have been written there, and a write explains the problem.
    if ((code === 'ENOENT' && dangling === undefined) || code === 'ENOTDIR') return { kind: 'missing' };
    return { kind: 'broken', problem: unreadableStateFile(path, dangling === undefined ? error : danglingLink(dangling, path)) };
  }
  const notUtf8 = nonUtf8Byte(bytes);
  if (notUtf8 !== undefined) {
    const reason = `it is not UTF-8 (byte ${notUtf8.byte}; it may have been saved as Latin-1 or Windows-1252): save it as UTF-8`;
    return { kind: 'broken', problem: invalidStateFile(path, { line: notUtf8.line, column: notUtf8.column }, reason), bytes };
  }
  const decoded = bytes.toString('utf8');
  // Editors on Windows may prepend a byte-order mark; it is not part of the content.
  const bom = decoded.startsWith('\uFEFF');
  const text = bom ? decoded.slice(1) : decoded;
  const parsed = parseStateText(text);
  if (!parsed.ok) return { kind: 'broken', problem: invalidStateFile(path, parsed.position, parsed.reason), bytes };
  return { kind: 'valid', state: parsed.state, extraKeys: parsed.extraKeys, text, bom };
}

/** What a read found: the state in force, or why the file cannot be trusted. */
export type ToolStateRead = { state: ToolState; problem?: undefined } | { state?: undefined; problem: StateFileError; bytes?: Buffer };

/**
 * Reads the state file, read-only. Missing → the defaults `{ enabled: [], disabled: [] }`, silently. Unknown extra
 * keys are warned about and ignored. List entries come back trimmed, without blanks or duplicates. A file that does
 * not parse (`STATE_INVALID`, with line and column) or cannot be read (`STATE_UNREADABLE`) comes back as `problem`
 * and is left exactly as it is: the caller fails closed (README "Enabled and disabled tools"), it never falls back
 * to the defaults.
 */
export async function readToolState(path: string, log: Logger): Promise<ToolStateRead> {
  const snapshot = await readSnapshot(path);
  if (snapshot.kind === 'missing') return { state: defaults() };
  if (snapshot.kind === 'broken') return { problem: snapshot.problem, ...(snapshot.bytes ? { bytes: snapshot.bytes } : {}) };
  warnExtras(path, snapshot.extraKeys, log);
  return { state: snapshot.state };
}

/**
 * The canonical text of a new state file: 2-space JSON, `enabled` then `disabled` (then `exceptions` when there are
 * any), a trailing newline.
 */
export function serialize(state: ToolState): string {
  const exceptions = state.exceptions ?? [];
  return `${JSON.stringify({ enabled: [...state.enabled], disabled: [...state.disabled], ...(exceptions.length > 0 && { exceptions: [...exceptions] }) }, null, 2)}\n`;
}

export function warnExtras(path: string, extraKeys: readonly string[], log: Logger): void {
  if (extraKeys.length === 0) return;
  const keys = extraKeys.map((k) => JSON.stringify(k)).join(', ');
  log.warn(`Tool state file ${path} has unknown key(s) ${keys}; they are ignored here and kept on every write.`);
}

// ---------------------------------------------------------------------------------------------------------------
// File operations

/**
 * Keeps a copy of a broken state file's `bytes` beside it as `<file>.corrupt-<time>`, so its content can be recovered
 * whatever happens to the file later. Once per distinct content: when a `<file>.corrupt-*` with the same bytes is
 * already there, that one is returned and nothing is written. Never replaces a file (exclusive create). Only
 * `serve` calls this; read-only commands write nothing. Never throws: a copy that cannot be written is warned about.
 */
export async function keepCopy(path: string, bytes: Buffer, log: Logger): Promise<string | undefined> {
  const dir = dirname(path);
  const prefix = `${basename(path)}.corrupt-`;
  try {
    for (const name of (await readdir(dir)).filter((n) => n.startsWith(prefix)).sort()) {
      const candidate = join(dir, name);
      const info = await lstat(candidate);
      if (info.isFile() && info.size === bytes.length && (await readFile(candidate)).equals(bytes)) return candidate;
    }
    const stamp = new Date().toISOString().replace(/:/g, '-');
    for (let n = 1; ; n++) {
      const target = join(dir, `${prefix}${stamp}${n === 1 ? '' : `-${n}`}`);
      try {
        await writeFile(target, bytes, { flag: 'wx' });
        return target;
      } catch (error) {
        if (errnoCode(error) !== 'EEXIST') throw error;
      }
    }
  } catch (error) {
    log.warn(`Could not keep a copy of the broken tool state file ${path} beside it (${reasonOf(error)}); the file itself is untouched.`);
    return undefined;
  }
}

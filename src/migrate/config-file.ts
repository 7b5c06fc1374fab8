import { constants, copyFile, open, readFile, realpath, unlink } from 'node:fs/promises';
import { dirname } from 'node:path';
import writeFileAtomic from 'write-file-atomic';
import { errnoWords } from '../shared/errno.js';
import { unreadableConfigAdvice } from '../config/config-path.js';
import { WorkbenchError } from '../errors.js';
import { fsReason, readOnlyReason } from '../shared/read-only.js';
import { acquireLock, lockOptions } from '../shared/file-lock.js';
import { createLogger, type Logger } from '../log.js';
import { danglingLink, danglingLinkOn } from '../shared/dangling-link.js';

// ---------------------------------------------------------------------------------------------------------------
// Files.

export interface ConfigFile {
  bytes: Buffer;
  text: string;
}

/**
 * Reads a config file for editing; undefined when it does not exist.
 *
 * @throws WorkbenchError `CONFIG_UNREADABLE` when it exists but cannot be read, saying what to do (`advice`, by the
 *   error's code; the workbench config's `--config` advice unless told).
 */
export async function readConfigFile(path: string, advice: (code: string | undefined) => string = (code) => unreadableConfigAdvice(path, code)): Promise<ConfigFile | undefined> {
  try {
    const bytes = await readFile(path);
    return { bytes, text: bytes.toString('utf8') };
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return undefined;
    const reason = errnoWords(code) ?? (error as Error).message;
    throw new WorkbenchError('CONFIG_UNREADABLE', `Cannot read ${path}: ${reason}. ${advice(code)}`, { cause: error });
  }
}

/**
 * Saves `text` to `path` atomically (write-file-atomic: temp file beside it, fsync, rename; the new file keeps the
 * old one's mode and owner). When `original` is given the file must still hold exactly those bytes (else nothing is
 * written: someone edited it meanwhile); they are first copied to `<path>.bak-<timestamp>` (a new name, never an
 * existing backup; skipped with `backup: false`). Without `original` the file must not exist yet; it is created, never overwritten.
 *
 * @returns the backup's path, when one was made.
 * @throws WorkbenchError `CONFIG_UNWRITABLE` (the file changed, appeared, is read-only — no write bit, or not writable
 *   by us — or cannot be written: with the reason and what to do; nothing is written).
 */
export async function saveConfigFile(
  path: string,
  text: string,
  original: Buffer | undefined,
  now = new Date(),
  options: { backup?: boolean; locked?: boolean; log?: Logger } = {},
): Promise<{ backup?: string }> {
  if (options.locked !== true) return withConfigLock(path, () => saveConfigFile(path, text, original, now, { ...options, locked: true }), options.log);
  const fail = (reason: string, cause?: unknown): never => {
    throw new WorkbenchError('CONFIG_UNWRITABLE', `Did not write ${path}: ${reason}.`, { cause });
  };
  let backup: string | undefined;
  if (original) {
    const current = await readFile(path).catch((error: unknown) => fail('it can no longer be read', error));
    if (!current.equals(original)) fail('it changed since this command read it (another program wrote it meanwhile); run the command again');
    // A rename replaces even a read-only file (the directory allows it): a file made read-only is left alone.
    const readOnly = await readOnlyReason(path);
    if (readOnly !== undefined) fail(`${readOnly}. Make it writable (chmod u+w ${path}) if the change is meant, or write to another file with --config`);
    // `server add`/`remove` make one small, shown edit each: no backup per command (options.backup false).
    if (options.backup !== false) backup = await makeBackup(path, now).catch((error: unknown) => fail(`the backup could not be made (${(error as Error).message})`, error));
  } else {
    // Claim the name first: an exclusive create fails if the file appeared meanwhile, where a rename would replace it.
    await open(path, 'wx').then(
      (handle) => handle.close(),
      async (error: unknown) => {
        const exists = (error as NodeJS.ErrnoException).code === 'EEXIST';
        // A dangling symbolic link "exists" to an exclusive create: say what is really there.
        const dangling = exists ? await danglingLinkOn(path) : undefined;
        if (dangling) fail(`${danglingLink(dangling, path).message}; restore what it points to, or remove the link and run the command again`, error);
        fail(exists ? 'the file was created by someone else meanwhile' : `it cannot be created: ${fsReason(error)}. ${fixDirectory(path)}`, error);
      },
    );
  }
  try {
    await writeFileAtomic(path, text);
  } catch (error) {
    if (!original) await unlink(path).catch(() => {}); // our own empty claim, never someone else's file
    // The system's message names the temp file beside it; the user needs the real path and what to do.
    fail(`the new content could not be written beside it in ${dirname(path)}: ${fsReason(error)}. ${fixDirectory(path)}`, error);
  }
  return backup === undefined ? {} : { backup };
}

/**
 * Runs `work` holding the config file's lock (`<file>.lock`, as the state file's: src/shared/file-lock.ts), so two
 * commands that edit one config — two `server add` at once, `migrate --write` beside `server remove` — take turns: the
 * check that the file still holds what was read and the write that replaces it are one step, and no edit is lost.
 * The lock is on the file a symbolic link points to, where the write goes.
 *
 * @param log where a lock left by a process that died is reported (the command's own logger).
 * @throws WorkbenchError `CONFIG_UNWRITABLE` when the lock cannot be had (nothing is written).
 */
export async function withConfigLock<T>(path: string, work: () => Promise<T>, log: Logger = createLogger()): Promise<T> {
  const target = await realpath(path).catch(() => path);
  const release = await acquireLock(
    target,
    lockOptions({}, log, true, {
      subject: `the config ${path}`,
      failure: (problem, cause) => new WorkbenchError('CONFIG_UNWRITABLE', `Did not write ${path}: ${problem}.${cause === undefined ? '' : ` ${fixDirectory(path)}.`}`, { cause }),
    }),
  );
  try {
    return await work();
  } finally {
    await release();
  }
}

function fixDirectory(path: string): string {
  return `Fix the permissions of ${dirname(path)} (the file is replaced by a new one written there), or write to another file with --config`;
}

/** `<path>.bak-20250102T030405Z`, or with `-2`, `-3`, … when that name exists: a backup never replaces another. */
async function makeBackup(path: string, now: Date): Promise<string> {
  const stamp = now.toISOString().replace(/[-:]/g, '').replace(/\.\d+Z$/, 'Z');
  for (let n = 1; ; n++) {
    const candidate = `${path}.bak-${stamp}${n === 1 ? '' : `-${n}`}`;
    try {
      await copyFile(path, candidate, constants.COPYFILE_EXCL);
      return candidate;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST' || n >= 1000) throw error;
    }
  }
}

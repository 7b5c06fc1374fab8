import { mkdir } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { Logger } from '../log.js';
import { type LockOptions, acquireLock, lockOptions } from '../shared/file-lock.js';
import { realTarget } from '../shared/real-target.js';
import { type StateRoomFile, folderUnwritable, lockOwner } from './file-errors.js';

/** A state-room file locked for one read-modify-write: the real file to read and replace, and how to let go. */
export interface LockedFile {
  /** `path` with symbolic links followed: read and replace this one, so a link stays a link. */
  target: string;
  release(): Promise<void>;
}

/**
 * Locks a file of the state room (the tool state file, the pins file) for one read-modify-write: the lock is that of
 * the real file (`<target>.lock`), so processes given different paths to it — one through a symbolic link, one
 * direct — hold the same lock and lose none of each other's changes. Creates the file's folder if needed. Messages
 * name `path` as the user gave it.
 *
 * @throws WorkbenchError `STATE_UNWRITABLE` when the folder or the lock cannot be created, or the lock stays held by a
 *   live process past the timeout.
 */
export async function lockStateRoomFile(path: string, file: StateRoomFile, options: LockOptions & { log: Logger }): Promise<LockedFile> {
  const target = await realTarget(path);
  try {
    await mkdir(dirname(target), { recursive: true });
  } catch (error) {
    throw await folderUnwritable(path, dirname(target), error, file);
  }
  const release = await acquireLock(target, lockOptions(options, options.log, true, lockOwner(path, file)));
  return { target, release };
}

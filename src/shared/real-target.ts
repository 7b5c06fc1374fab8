import { realpath } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';

/**
 * The file a path names once symbolic links are followed: the file to lock and replace, so a link (a dotfiles
 * manager's, or a linked folder on its path) survives the rename and every process locks the same real file whichever
 * path it was given. A file not there yet resolves through its folder; a path that does not resolve at all (a dangling
 * link, a folder not there yet) comes back absolute as given. Never throws.
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

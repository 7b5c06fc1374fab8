import { lstat, readlink } from 'node:fs/promises';

/**
 * A symbolic link whose target is gone (a dotfiles folder moved away) is not "no file": a file the user wrote is
 * somewhere, and what it said (disabled tools) must not be dropped as if it had never been written.
 */

/** Where `path` points when it is a symbolic link (undefined when it is not one, or is not there at all). */
export async function linkTarget(path: string): Promise<string | undefined> {
  try {
    return (await lstat(path)).isSymbolicLink() ? await readlink(path) : undefined;
  } catch {
    return undefined;
  }
}

/** The error of a symbolic link whose target does not exist (code `EDANGLING`), as file messages word it. */
export function danglingLink(target: string): Error {
  return Object.assign(new Error(`it is a symbolic link to ${target}, which does not exist`), { code: 'EDANGLING' });
}

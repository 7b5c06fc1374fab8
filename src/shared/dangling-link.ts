import { lstat, readlink, stat } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';

/**
 * A symbolic link whose target is gone (a dotfiles folder moved away) is not "no file": a file the user wrote is
 * somewhere, and what it said (disabled tools) must not be dropped as if it had never been written. The link may be
 * the file itself or a folder on its path (`~/.config/mcp-workbench -> ~/dotfiles/mcp-workbench`).
 */

/** A dangling symbolic link: where it is and where it points. */
export interface DanglingLink {
  link: string;
  target: string;
}

/**
 * The dangling symbolic link that makes `path` missing, if any: the path itself or the nearest of its folders that is
 * there as a link whose target is not. Undefined when the path is simply not there (the first part of it that exists
 * is no link, or a link that resolves).
 */
export async function danglingLinkOn(path: string): Promise<DanglingLink | undefined> {
  let current = resolve(path);
  for (;;) {
    const found = await lstat(current).then(
      (s) => s,
      () => undefined,
    );
    if (found) {
      if (!found.isSymbolicLink()) return undefined;
      const resolves = await stat(current).then(
        () => true,
        () => false,
      );
      return resolves ? undefined : { link: current, target: await readlink(current) };
    }
    const parent = dirname(current);
    if (parent === current) return undefined;
    current = parent;
  }
}

/** A path missing behind a dangling link, as file messages word it: a type of its own, so a message can pick its fix. */
export class DanglingLinkError extends Error {
  constructor(readonly dangling: DanglingLink, path: string) {
    const which = dangling.link === resolve(path) ? 'it is' : `${dangling.link}, a folder on its path, is`;
    super(`${which} a symbolic link to ${dangling.target}, which does not exist`);
    this.name = 'DanglingLinkError';
  }
}

/** The error of a path missing behind a dangling link. */
export function danglingLink(dangling: DanglingLink, path: string): DanglingLinkError {
  return new DanglingLinkError(dangling, path);
}

import { mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { RemoteServerConfig, ServerConfig, StdioServerConfig } from '../config/types.js';
import { WorkbenchError } from '../errors.js';
import { fsReason } from '../shared/read-only.js';

/**
 * Who a set of downstream connections serves, for `${user:id}` and `${user:dir}` in a server entry (README "Files of
 * each user"): over `--http` each token is one user, and a server that keeps its data in a file (the memory server's
 * `MEMORY_FILE_PATH`) gets a file of each user's own by naming it under `${user:dir}`.
 */
export interface UserPlace {
  /** `local` (stdio, or HTTP without a token), `shared` (a `shared: true` server), else 16 hex digits of the token's SHA-256. */
  id: string;
  /** `<the state file's folder>/users/<id>`, made (owner-only) when a server entry first names it. */
  dir: string;
}

/**
 * The folder of users' folders for the tool state file `statePath`: `users` beside it (README "Files of each user").
 * Every command that starts servers takes it from the state file it resolved, as `serve` does, so a folder is never
 * made anywhere else (the home folder of a test, say).
 */
export function usersDirBeside(statePath: string): string {
  return join(dirname(statePath), 'users');
}

/**
 * The place of a principal (`local`, `shared`, a token's SHA-256 in hex, or a user id itself: the 16 hex digits
 * `tools approve --user` names) under `usersDir`.
 */
export function userPlace(principal: string, usersDir: string): UserPlace {
  const id = /^[0-9a-f]{16}(?:[0-9a-f]{48})?$/.test(principal) ? principal.slice(0, 16) : principal === 'shared' ? 'shared' : 'local';
  return { id, dir: join(usersDir, id) };
}

/** Whether the entry names `${user:id}` or `${user:dir}`: then what its process lists may be its user's own. */
export function namesUser(server: ServerConfig): boolean {
  return userNaming(server) !== 'none';
}

/** What an entry names of its user: nothing, `${user:…}` but not `${user:dir}`, or `${user:dir}` (whose folder is made). */
type UserNaming = 'none' | 'user' | 'dir';

/** The entry's {@link UserNaming}, read from its JSON once per entry object. */
function userNaming(server: ServerConfig): UserNaming {
  let naming = namingUser.get(server);
  if (naming === undefined) {
    const text = JSON.stringify(server);
    naming = text.includes('${user:dir}') ? 'dir' : text.includes('${user:') ? 'user' : 'none';
    namingUser.set(server, naming);
  }
  return naming;
}

/** userNaming's answers, per entry object (a loaded config's entries are not changed: a reload makes new ones). */
const namingUser = new WeakMap<ServerConfig, UserNaming>();

/**
 * The entry as started for `user`: `${user:id}` and `${user:dir}` filled in wherever they stand (command, args, env,
 * cwd; url, headers). The folder is made when the entry names it, so a server can create its file there. An entry
 * that names neither is returned as it is.
 */
export function forUser<T extends ServerConfig>(server: T, user: UserPlace): T {
  const naming = userNaming(server);
  if (naming === 'none') return server;
  if (naming === 'dir') makeUserDir(user.dir);
  const fill = (value: string): string => value.replaceAll('${user:id}', user.id).replaceAll('${user:dir}', user.dir);
  const values = (record: Record<string, string>): Record<string, string> => Object.fromEntries(Object.entries(record).map(([k, v]) => [k, fill(v)]));
  if (server.type === 'stdio') {
    const stdio: StdioServerConfig = server;
    return { ...stdio, command: fill(stdio.command), args: stdio.args.map(fill), env: values(stdio.env), ...(stdio.cwd !== undefined && { cwd: fill(stdio.cwd) }) } as T;
  }
  const remote: RemoteServerConfig = server;
  return { ...remote, url: fill(remote.url), headers: values(remote.headers) } as T;
}

/** Makes a user's folder (owner-only); when it cannot be made, says which folder, why, and where it comes from. */
function makeUserDir(dir: string): void {
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
  } catch (error) {
    throw new WorkbenchError(
      'CONNECT_FAILED',
      `the folder \${user:dir} stands for, ${dir}, cannot be made: ${fsReason(error)}. It is users/<id> beside the tool state file: make that folder writable, or point WORKBENCH_STATE_FILE (or --state-file) at a writable folder.`,
      { hint: 'A person must fix this on the machine the workbench runs on; the other servers work meanwhile.' },
    );
  }
}

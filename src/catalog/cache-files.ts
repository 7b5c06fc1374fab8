import { mkdir, open, stat } from 'node:fs/promises';
import writeFileAtomic from 'write-file-atomic';
import { errorMessage } from '../errors.js';
import type { Logger } from '../log.js';
import { errnoCode, errnoWords } from '../shared/errno.js';
import { folderBlocker } from '../shared/read-only.js';

/**
 * The catalog cache's files on disk (README "Catalog cache"), trusted only when they are the user's own: a file is
 * read only from a directory owned by the current user and writable by no one else, and only when the file itself is
 * the user's and writable by no one else (where the platform has user ids). Anything else is ignored with one warning
 * naming the path and what to do — never a chmod of a directory the user pointed at (MCP_WORKBENCH_CACHE_DIR may be
 * /tmp). A missing file is quietly nothing; no failure here is ever thrown.
 */
export class CacheFiles {
  /** Paths warned about: each is named once per process, however often it is read. */
  private readonly warned = new Set<string>();
  /** Why the directory is not trusted, once known (undefined: trusted, or not there yet). */
  private dirProblem: string | undefined;

  constructor(
    readonly dir: string,
    private readonly log: Logger,
    private readonly kind: CacheKind = CATALOG_FILES,
  ) {}

  /** The text of a file, or undefined: missing (quietly), or unreadable, or not trusted (with one warning each). */
  async read(path: string, label: string): Promise<string | undefined> {
    if (!(await this.dirTrusted())) return undefined;
    let handle;
    try {
      handle = await open(path, 'r');
    } catch (error) {
      // ENOTDIR: a file stands where a folder of the cache's path should be; the cache is off, not this one file.
      if (errnoCode(error) === 'ENOTDIR') await this.cannotMakeDir(error);
      else if (errnoCode(error) !== 'ENOENT') this.unreadable(path, label, error);
      return undefined;
    }
    try {
      const problem = looseness(await handle.stat(), 'file');
      if (problem) {
        this.warnOnce(path, `ignoring the ${this.kind.name} file ${path} of ${label}: ${problem}, so it may not be what this workbench wrote; delete it (${this.kind.rewritten})`);
        return undefined;
      }
      return await handle.readFile('utf8');
    } catch (error) {
      this.unreadable(path, label, error);
      return undefined;
    } finally {
      await handle.close().catch(() => {});
    }
  }

  /** Writes a file atomically (0600, in a 0700 directory it makes if need be); a failure only costs a warning. */
  async write(path: string, text: string, label: string): Promise<void> {
    try {
      await mkdir(this.dir, { recursive: true, mode: 0o700 });
    } catch (error) {
      await this.cannotMakeDir(error);
      return;
    }
    try {
      // Never into a directory others may write to: they could replace what is written (warned about once).
      if (!(await this.dirTrusted())) return;
      // write-file-atomic: temp file beside it, fsync, rename — a reader sees the old file or the new one.
      await writeFileAtomic(path, text, { mode: 0o600 });
    } catch (error) {
      this.cannotWrite(path, label, error);
    }
  }

  /**
   * A write failed. A folder that cannot be written fails every write the same way, all day long: each cause (errno)
   * is said once for the folder, naming it and what to do — never the temp file's name — and repeats go to debug.
   */
  private cannotWrite(path: string, label: string, error: unknown): void {
    const code = errnoCode(error);
    const key = `${this.dir}\0write\0${code ?? errorMessage(error)}`;
    if (this.warned.has(key)) {
      this.log.debug(`could not write the ${this.kind.name} of ${label} to ${path}: ${errorMessage(error)}`);
      return;
    }
    const why = errnoWords(code) ?? errorMessage(error);
    this.warnOnce(
      key,
      `could not write the ${this.kind.name} of ${label} in ${this.dir}: ${why}; make that folder writable for this user or set ` +
        `MCP_WORKBENCH_CACHE_DIR to a folder of your own. ${this.kind.meanwhile} next time; later writes that fail the same way are not reported again.`,
    );
  }

  /** Says once per path why a file is ignored. */
  warnOnce(path: string, message: string): void {
    if (this.warned.has(path)) return;
    this.warned.add(path);
    this.log.warn(message);
  }

  /**
   * The cache's folder cannot be made, so the cache is off for every server: said once (whichever server's read or
   * write finds it first), naming the part of its path that blocks it — the system's error names the folder asked for.
   */
  private async cannotMakeDir(error: unknown): Promise<void> {
    if (this.warned.has(this.dir)) return;
    const blocker = await folderBlocker(this.dir);
    const why = blocker ? `${blocker.reason}; ${blocker.fix}, or set MCP_WORKBENCH_CACHE_DIR to a folder of your own` : errorMessage(error);
    this.warnOnce(this.dir, `the ${this.kind.name} is off: could not create the directory ${this.dir}: ${why}. ${this.kind.meanwhile}`);
  }

  private unreadable(path: string, label: string, error: unknown): void {
    const why = errnoWords(errnoCode(error)) ?? errorMessage(error);
    this.warnOnce(path, `ignoring the ${this.kind.name} file ${path} of ${label}: it cannot be read (${why}); delete it, or make it a file you can read (${this.kind.rewritten})`);
  }

  /** Whether the directory may be read from and written to; warns once when not. A missing one is trusted (it is made 0700). */
  private async dirTrusted(): Promise<boolean> {
    if (this.dirProblem !== undefined) return false;
    let problem: string | undefined;
    try {
      problem = looseness(await stat(this.dir), 'directory');
    } catch {
      return true;
    }
    if (!problem) return true;
    this.dirProblem = problem;
    this.warnOnce(
      this.dir,
      `ignoring the ${this.kind.name} in ${this.dir}: the directory ${problem}, so another user could plant ${this.kind.planted} there; ` +
        `make it yours alone (chmod 700 ${this.dir}) or set MCP_WORKBENCH_CACHE_DIR to a directory of your own. ${this.kind.meanwhile}`,
    );
    return false;
  }
}

/** What the files are, for the warnings: the catalog cache's tool lists, or the semantic ranker's tool vectors. */
export interface CacheKind {
  name: string;
  planted: string;
  rewritten: string;
  meanwhile: string;
}

const CATALOG_FILES: CacheKind = {
  name: 'catalog cache',
  planted: 'tool lists',
  rewritten: 'it is rewritten after the server connects',
  meanwhile: 'Servers are connected as if nothing were cached',
};

/** The semantic ranker's tool vectors (README "Semantic ranker"), in the cache's `embeddings` folder. */
export const VECTOR_FILES: CacheKind = {
  name: 'search vectors',
  planted: 'vectors that steer search',
  rewritten: 'it is written again after the next embedding',
  meanwhile: 'Tool texts are embedded again as if nothing were stored',
};

/**
 * Why a file or directory is not the user's alone: owned by another user, or writable by every user (a file: or by its
 * group). A directory its group may write to is accepted — with per-user groups (umask 002) that is every directory
 * the user makes — since each file in it must still be the user's own and writable by no one else.
 */
function looseness(st: { uid: number; mode: number }, what: 'file' | 'directory'): string | undefined {
  const uid = process.getuid?.();
  if (uid !== undefined && st.uid !== uid) return `is owned by another user (uid ${st.uid}, not ${uid})`;
  const loose = what === 'file' ? 0o022 : 0o002;
  if (process.platform !== 'win32' && (st.mode & loose) !== 0) return `is writable by ${st.mode & 0o002 ? 'every user' : 'its group'} (mode ${(st.mode & 0o777).toString(8)}; a ${what} of the cache must be 0${what === 'file' ? '600' : '700'})`;
  return undefined;
}

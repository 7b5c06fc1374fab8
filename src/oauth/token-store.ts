import type { OAuthDiscoveryState, StoredOAuthClientInformation, StoredOAuthTokens } from '@modelcontextprotocol/client';
import { createHash } from 'node:crypto';
import { chmod, mkdir, readFile, readdir, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import writeFileAtomic from 'write-file-atomic';
import { WorkbenchError } from '../errors.js';
import type { Logger } from '../log.js';
import type { StoredDpopKey } from './dpop-key.js';
import { acquireLock, lockOptions } from '../shared/file-lock.js';
import { reasonOf } from '../shared/errno.js';
import { folderBlocker } from '../shared/read-only.js';

const FORMAT = 1;

/** Which server a sign-in belongs to: tokens are kept per toolbox/server *and* URL, and sent only to that URL. */
export interface OAuthKey {
  toolbox: string;
  server: string;
  url: string;
}

/** What one server's file holds (README "Remote servers behind OAuth"). Never logged, never in the catalog cache. */
export interface OAuthRecord {
  tokens?: StoredOAuthTokens;
  /** When `tokens` were saved (epoch ms): with `expires_in`, when the access token expires. */
  savedAt?: number;
  clientInformation?: StoredOAuthClientInformation;
  discoveryState?: OAuthDiscoveryState;
  /** The PKCE verifier of the sign-in in progress. */
  codeVerifier?: string;
  /** The loopback redirect URI the client was registered with (its port is reused for the next sign-in). */
  redirectUrl?: string;
  /** The DPoP key DPoP-bound tokens are bound to (RFC 9449), where the authorization server uses DPoP. */
  dpopKey?: StoredDpopKey;
}

/** One file as listed by `auth status`. */
export interface StoredSignIn extends OAuthKey {
  file: string;
  record: OAuthRecord;
}

interface OAuthFile extends OAuthRecord {
  format: number;
  toolbox: string;
  server: string;
  url: string;
}

/**
 * The OAuth token files: one per server and URL under one directory (mode 0700), each mode 0600, written with
 * write-file-atomic (temp file, fsync, rename) under a lock (`<file>.lock`), so a `serve` and an `auth login` at once
 * both land and a crash leaves the old file or the new one. A file that does not parse is treated as no sign-in and is
 * replaced on the next sign-in (it holds nothing but what a sign-in gets back).
 */
export class OAuthStore {
  constructor(
    readonly dir: string,
    private readonly log: Logger,
  ) {}

  /** The file of one server at one URL: `<toolbox>__<server>.<hash of the URL>.json` (names never contain `__`). */
  fileOf(key: OAuthKey): string {
    const hash = createHash('sha256').update(key.url).digest('hex').slice(0, 16);
    return join(this.dir, `${key.toolbox}__${key.server}.${hash}.json`);
  }

  /** The record of `key`; empty when there is none, it does not parse, or it was made for another URL. Never throws. */
  async read(key: OAuthKey): Promise<OAuthRecord> {
    const file = await readOAuthFile(this.fileOf(key));
    if (!file || file.url !== key.url || file.toolbox !== key.toolbox || file.server !== key.server) return {};
    const { format: _format, toolbox: _toolbox, server: _server, url: _url, ...record } = file;
    return record;
  }

  /**
   * Changes the record of `key` under its lock: `change` gets the current record and returns the next one.
   * @throws WorkbenchError OAUTH_STORE_FAILED naming the file and what to do
   */
  async update(key: OAuthKey, change: (record: OAuthRecord) => OAuthRecord): Promise<OAuthRecord> {
    const path = this.fileOf(key);
    await this.prepareDirectory();
    const release = await acquireLock(path, lockOptions({}, this.log, true, {
      subject: 'the OAuth sign-in',
      failure: (problem, cause) => this.failure(path, problem, cause),
    }));
    try {
      const next = change(await this.read(key));
      const file: OAuthFile = { format: FORMAT, toolbox: key.toolbox, server: key.server, url: key.url, ...next };
      try {
        await writeFileAtomic(path, `${JSON.stringify(file, null, 2)}\n`, { mode: 0o600 });
        await chmod(path, 0o600);
      } catch (error) {
        throw this.failure(path, `could not write it: ${reasonOf(error)}`, error);
      }
      return next;
    } finally {
      await release();
    }
  }

  /** Removes every file of toolbox/server (whatever URL it was for); the files removed. */
  async remove(toolbox: string, server: string): Promise<string[]> {
    const removed: string[] = [];
    for (const entry of await this.list()) {
      if (entry.toolbox !== toolbox || entry.server !== server) continue;
      await rm(entry.file, { force: true });
      removed.push(entry.file);
    }
    return removed;
  }

  /** Every readable file in the directory, in name order. Never throws. */
  async list(): Promise<StoredSignIn[]> {
    let names: string[];
    try {
      names = (await readdir(this.dir)).filter((name) => name.endsWith('.json')).sort();
    } catch {
      return [];
    }
    const found: StoredSignIn[] = [];
    for (const name of names) {
      const file = await readOAuthFile(join(this.dir, name));
      if (!file) continue;
      const { format: _format, toolbox, server, url, ...record } = file;
      found.push({ toolbox, server, url, file: join(this.dir, name), record });
    }
    return found;
  }

  /** Creates the directory 0700, and tightens it when it is looser (POSIX): it holds credentials. */
  private async prepareDirectory(): Promise<void> {
    try {
      await mkdir(this.dir, { recursive: true, mode: 0o700 });
      if (process.platform !== 'win32' && ((await stat(this.dir)).mode & 0o077) !== 0) await chmod(this.dir, 0o700);
    } catch (error) {
      const blocker = await folderBlocker(this.dir);
      throw this.failure(this.dir, `could not create the directory: ${blocker ? `${blocker.reason}; ${blocker.fix}` : reasonOf(error)}`, error);
    }
  }

  private failure(path: string, what: string, cause: unknown): WorkbenchError {
    return new WorkbenchError(
      'OAUTH_STORE_FAILED',
      `Cannot save the OAuth sign-in in ${path}: ${what}. Fix the permissions of ${this.dir}, or point MCP_WORKBENCH_OAUTH_DIR at a writable directory.`,
      { cause },
    );
  }
}

async function readOAuthFile(path: string): Promise<OAuthFile | undefined> {
  try {
    // Missing, unreadable or not a sign-in file: no sign-in (the next sign-in writes a good one).
    const parsed = JSON.parse(await readFile(path, 'utf8')) as Partial<OAuthFile> | null;
    if (parsed?.format !== FORMAT || typeof parsed.url !== 'string' || typeof parsed.toolbox !== 'string' || typeof parsed.server !== 'string') return undefined;
    return parsed as OAuthFile;
  } catch {
    return undefined;
  }
}

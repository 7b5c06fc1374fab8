import { createHash } from 'node:crypto';
import { join } from 'node:path';
import type { Tool } from '@modelcontextprotocol/client';
import { LRUCache } from 'lru-cache';
import type { EraPersistence, EraVerdict } from '../clients/era-memory.js';
import type { ServerConfig } from '../config/types.js';
import { errorMessage } from '../errors.js';
import type { Logger } from '../log.js';
import { honouredTtl, MAX_TTL_MS } from '../shared/list-ttl.js';
import { CacheFiles } from './cache-files.js';
import { cacheKey, catalogKey } from './catalog-key.js';

/** An unchanged list is written again (to record its new age) at most this often. */
const REWRITE_SAME_AFTER_MS = 60_000;

/** How far in the future a file's `listedAt` may be (clocks of one machine drift, or were set back): past it, unusable. */
const CLOCK_SKEW_MS = 5 * 60_000;

/**
 * How many lists and eras one process keeps in memory (the files keep them all). A key is a toolbox × server entry ×
 * capability set (× user for a server of each user), so a long-running `--http` workbench meets new keys with every
 * config edit and every new user; past this, the least recently used are read from their files again when needed.
 */
export const CACHE_MEMO_ENTRIES = 512;

/** Format 2: tool lists, prompt lists and eras in files of their own (format 1 kept tools and era in one file per launch key). */
const FORMAT = 2;

/**
 * The directory of the catalog cache (README: "Catalog cache"): `MCP_WORKBENCH_CACHE_DIR`, else
 * `$XDG_CACHE_HOME/mcp-workbench`, else `~/.cache/mcp-workbench`.
 */
export function catalogCacheDir(env: Record<string, string | undefined>, homedir: string): string {
  if (env.MCP_WORKBENCH_CACHE_DIR) return env.MCP_WORKBENCH_CACHE_DIR;
  if (env.XDG_CACHE_HOME) return join(env.XDG_CACHE_HOME, 'mcp-workbench');
  return join(homedir, '.cache', 'mcp-workbench');
}

export { cacheKey, catalogKey } from './catalog-key.js';

/** A server's last known tool list, as open_toolbox may show it (README "Catalog cache"). */
export interface CachedList {
  tools: Tool[];
  /** When the server listed it (epoch ms). */
  listedAt: number;
  /** Until when the server said it may be reused without asking again (a positive ttlMs); absent: revalidate. */
  freshUntil?: number;
}

/** A server's last known prompts, as prompts/list shows them without starting it. */
export interface CachedPrompts {
  prompts: Prompt[];
  listedAt: number;
  freshUntil?: number;
}

/** A prompt as the server listed it: every field kept. */
export type Prompt = Record<string, unknown> & { name: string };

type ListKind = 'tools' | 'prompts';

interface Listed<T> {
  items: T[];
  listedAt: number;
  freshUntil?: number;
}

interface ListFile {
  format: number;
  kind: ListKind;
  toolbox: string;
  server: string;
  listedAt: string;
  freshUntil?: string;
  tools?: unknown[];
  prompts?: unknown[];
}

interface EraFile {
  format: number;
  kind: 'era';
  toolbox: string;
  server: string;
  savedAt: string;
  era: EraVerdict;
}

/**
 * Each server's last `tools/list` and `prompts/list` (per credentials and client capabilities) and protocol era, one
 * file each. Files hold toolbox and server names, the tools and prompts as listed, and the era — never a command, args,
 * env or header values, URLs. The directory is 0700 and files 0600; only the user's own are trusted (see CacheFiles).
 * A file that cannot be read or parsed, or holds something else, is ignored with one warning (and rewritten at the
 * next live listing); nothing here is ever fatal.
 */
export class CatalogCache implements EraPersistence {
  /**
   * What this process read or wrote last, per file key: so unchanged entries are not rewritten and reads are cheap.
   * Bounded (CACHE_MEMO_ENTRIES each): an entry let go is read from its file again.
   */
  private readonly lists = new LRUCache<string, { list: Listed<unknown> | undefined; json?: string; writtenAt?: number }>({ max: CACHE_MEMO_ENTRIES });
  private readonly eras = new LRUCache<string, { era: EraVerdict | undefined; json?: string }>({ max: CACHE_MEMO_ENTRIES });
  /** Writes in progress, so shutdown can wait for them (a file half-written is never seen: see write). */
  private readonly pending = new Set<Promise<void>>();
  private readonly files: CacheFiles;

  /**
   * `env`: the workbench's own environment, which an `inheritEnv` server inherits — its credentials key that server's
   * lists (see catalogKey).
   */
  constructor(
    readonly dir: string,
    private readonly log: Logger,
    private readonly env: Readonly<Record<string, string | undefined>> = {},
  ) {
    this.files = new CacheFiles(dir, log);
  }

  /** The last tool list of a server for these capabilities, expired or not; undefined when none (or unreadable). */
  async read(toolbox: string, server: ServerConfig, capabilities: string): Promise<CachedList | undefined> {
    const list = await this.readList('tools', toolbox, server, capabilities, isTool);
    return list && { tools: list.items, listedAt: list.listedAt, ...(list.freshUntil !== undefined ? { freshUntil: list.freshUntil } : {}) };
  }

  /**
   * Persists a server's live tools (atomically) when they differ from what the cache holds; `ttlMs` is the server's
   * hint (positive: fresh until then). Never throws.
   */
  write(toolbox: string, server: ServerConfig, capabilities: string, tools: readonly Tool[], ttlMs?: number): Promise<void> {
    return this.writeList('tools', toolbox, server, capabilities, tools, ttlMs);
  }

  /**
   * A server's last prompt list (README "Resources, prompts and completions"), kept like its tool list: same key,
   * same rules. Undefined when none (or unreadable).
   */
  async readPrompts(toolbox: string, server: ServerConfig, capabilities: string): Promise<CachedPrompts | undefined> {
    const list = await this.readList('prompts', toolbox, server, capabilities, isPrompt);
    return list && { prompts: list.items, listedAt: list.listedAt, ...(list.freshUntil !== undefined ? { freshUntil: list.freshUntil } : {}) };
  }

  /** Persists a server's live prompt list, as {@link write} does its tools. Never throws. */
  writePrompts(toolbox: string, server: ServerConfig, capabilities: string, prompts: readonly Prompt[], ttlMs?: number): Promise<void> {
    return this.writeList('prompts', toolbox, server, capabilities, prompts, ttlMs);
  }

  private async readList<T>(kind: ListKind, toolbox: string, server: ServerConfig, capabilities: string, valid: (item: unknown) => item is T): Promise<Listed<T> | undefined> {
    // An entry that cannot start as configured (`problems`): its list could be neither checked nor used.
    if (server.catalogCache === false || server.problems) return undefined;
    const key = listKey(kind, toolbox, server, capabilities, this.env);
    const known = this.lists.get(key);
    if (known) return known.list as Listed<T> | undefined;
    const file = await this.load<ListFile>(key, kind, `${toolbox}/${server.name}`);
    const list = file && this.usableList(key, kind, `${toolbox}/${server.name}`, file, valid);
    // What this process learned meanwhile wins over the file.
    const learned = this.lists.get(key);
    if (learned) return learned.list as Listed<T> | undefined;
    this.lists.set(key, { list, ...(list ? { json: JSON.stringify(list.items) } : {}) });
    return list;
  }

  /**
   * The list a file holds, if it is one as this version writes it (else a warning, once): its items valid, listed no
   * later than now (give or take clock skew), and fresh for no more than MAX_TTL_MS past its listing, whatever it says.
   */
  private usableList<T>(key: string, kind: ListKind, label: string, file: ListFile, valid: (item: unknown) => item is T): Listed<T> | undefined {
    const items = file[kind];
    const listedAt = typeof file.listedAt === 'string' ? Date.parse(file.listedAt) : NaN;
    if (!Array.isArray(items) || !items.every(valid) || !Number.isFinite(listedAt)) {
      this.malformed(key, label, `it does not hold a ${kind} list as this version writes it`);
      return undefined;
    }
    const now = Date.now();
    if (listedAt > now + CLOCK_SKEW_MS) {
      this.malformed(key, label, `it says it was listed in the future (${file.listedAt}): the clock was set back, or the file is not this workbench's`);
      return undefined;
    }
    const hinted = typeof file.freshUntil === 'string' ? Date.parse(file.freshUntil) : NaN;
    const freshUntil = Math.min(hinted, listedAt + MAX_TTL_MS);
    return { items: items as T[], listedAt: Math.min(listedAt, now), ...(Number.isFinite(freshUntil) ? { freshUntil } : {}) };
  }

  private writeList(kind: ListKind, toolbox: string, server: ServerConfig, capabilities: string, items: readonly unknown[], ttlMs?: number): Promise<void> {
    if (server.catalogCache === false) return Promise.resolve();
    // Called from list-change handlers: whatever a server sent, a cache write never throws into them.
    try {
      return this.writeListNow(kind, toolbox, server, capabilities, items, ttlMs);
    } catch (error) {
      this.log.warn(`could not keep the ${kind} of ${toolbox}/${server.name} in the catalog cache: ${errorMessage(error)}`);
      return Promise.resolve();
    }
  }

  private writeListNow(kind: ListKind, toolbox: string, server: ServerConfig, capabilities: string, items: readonly unknown[], ttlMs?: number): Promise<void> {
    const key = listKey(kind, toolbox, server, capabilities, this.env);
    const now = Date.now();
    // A hint counts for at most MAX_TTL_MS (README "Caching hints").
    const fresh = honouredTtl(ttlMs);
    const list: Listed<unknown> = { items: [...items], listedAt: now, ...(fresh !== undefined && fresh > 0 ? { freshUntil: now + fresh } : {}) };
    const json = JSON.stringify(list.items);
    const previous = this.lists.get(key);
    // The same list confirmed again within a minute: the file's age is near enough (no write per reconnect).
    if (previous?.json === json && list.freshUntil === undefined && previous.writtenAt !== undefined && now - previous.writtenAt < REWRITE_SAME_AFTER_MS) {
      previous.list = list;
      return Promise.resolve();
    }
    this.lists.set(key, { list, json, writtenAt: now });
    const file: ListFile = {
      format: FORMAT,
      kind,
      toolbox,
      server: server.name,
      listedAt: new Date(now).toISOString(),
      ...(list.freshUntil !== undefined ? { freshUntil: new Date(list.freshUntil).toISOString() } : {}),
      [kind]: list.items,
    };
    return this.save(key, file, `${toolbox}/${server.name}`);
  }

  /** The protocol era the server spoke last time, or undefined (always for a server with `catalogCache: false`). */
  async readEra(toolbox: string, server: ServerConfig): Promise<EraVerdict | undefined> {
    if (server.catalogCache === false) return undefined;
    const key = cacheKey(toolbox, server);
    const known = this.eras.get(key);
    if (known) return known.era;
    const file = await this.load<EraFile>(key, 'era', `${toolbox}/${server.name}`);
    const era = file && isEra(file.era) ? file.era : undefined;
    if (file && !era) this.malformed(key, `${toolbox}/${server.name}`, 'it does not hold a protocol era as this version writes it');
    const learned = this.eras.get(key);
    if (learned) return learned.era;
    this.eras.set(key, { era, ...(era ? { json: JSON.stringify(era) } : {}) });
    return era;
  }

  /** Persists the era a server spoke (never that of a server with `catalogCache: false`). Never throws. */
  writeEra(toolbox: string, server: ServerConfig, era: EraVerdict): void {
    if (server.catalogCache === false) return;
    const key = cacheKey(toolbox, server);
    const json = JSON.stringify(era);
    if (this.eras.get(key)?.json === json) return;
    this.eras.set(key, { era, json });
    const file: EraFile = { format: FORMAT, kind: 'era', toolbox, server: server.name, savedAt: new Date().toISOString(), era };
    void this.save(key, file, `${toolbox}/${server.name}`);
  }

  /** Waits for the writes in progress (called on shutdown, so a catalog just listed is not lost). */
  async flush(): Promise<void> {
    await Promise.allSettled([...this.pending]);
  }

  /**
   * A file of this kind and format, or undefined: missing (quietly), written by another version (a debug note), or
   * unreadable, not the user's own, or not JSON (one warning per file: see CacheFiles).
   */
  private async load<T extends { format: number; kind: string }>(key: string, kind: T['kind'], label: string): Promise<T | undefined> {
    const path = this.path(key);
    const text = await this.files.read(path, label);
    if (text === undefined) return undefined;
    try {
      const parsed = JSON.parse(text) as Partial<T>;
      if (parsed.format !== FORMAT || parsed.kind !== kind) {
        this.log.debug(`ignoring the catalog cache file of ${label} (${path}): written by another version; it is rewritten after the server connects`);
        return undefined;
      }
      return parsed as T;
    } catch (error) {
      this.files.warnOnce(path, `ignoring the catalog cache file ${path} of ${label}: ${errorMessage(error)}; it is rewritten after the server connects (or delete it)`);
      return undefined;
    }
  }

  /** Says once that a file of the right format holds something else than this version writes. */
  private malformed(key: string, label: string, what: string): void {
    const path = this.path(key);
    this.files.warnOnce(path, `ignoring the catalog cache file ${path} of ${label}: ${what}; it is rewritten after the server connects (or delete it)`);
  }

  private save(key: string, file: ListFile | EraFile, label: string): Promise<void> {
    const done = this.files.write(this.path(key), JSON.stringify(file), label);
    this.pending.add(done);
    void done.finally(() => this.pending.delete(done));
    return done;
  }

  private path(key: string): string {
    return join(this.dir, `${key.slice(0, 32)}.json`);
  }
}

/** The file key of a list: a tool list's is its catalogKey; a prompt list's is derived from it (a file of its own). */
function listKey(kind: ListKind, toolbox: string, server: ServerConfig, capabilities: string, env: Readonly<Record<string, string | undefined>>): string {
  const key = catalogKey(toolbox, server, capabilities, env);
  return kind === 'tools' ? key : createHash('sha256').update(`${kind}\0${key}`).digest('hex');
}

function isPrompt(value: unknown): value is Prompt {
  return typeof value === 'object' && value !== null && typeof (value as { name?: unknown }).name === 'string';
}

function isTool(value: unknown): value is Tool {
  if (typeof value !== 'object' || value === null) return false;
  const tool = value as { name?: unknown; inputSchema?: unknown };
  return typeof tool.name === 'string' && typeof tool.inputSchema === 'object' && tool.inputSchema !== null;
}

function isEra(value: unknown): value is EraVerdict {
  const era = value as { kind?: unknown; discover?: unknown } | undefined;
  if (era?.kind === 'legacy') return true;
  return era?.kind === 'modern' && typeof era.discover === 'object' && era.discover !== null;
}

import { createHash } from 'node:crypto';
import { mkdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import writeFileAtomic from 'write-file-atomic';
import type { Tool } from '@modelcontextprotocol/client';
import type { EraPersistence, EraVerdict } from '../clients/era-memory.js';
import type { ServerConfig } from '../config/types.js';
import { errorMessage } from '../errors.js';
import type { Logger } from '../log.js';
import { honouredTtl } from '../shared/list-ttl.js';
import { cacheKey, catalogKey } from './catalog-key.js';

/** An unchanged list is written again (to record its new age) at most this often. */
const REWRITE_SAME_AFTER_MS = 60_000;

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
 * env or header values, URLs. The directory is 0700 and files 0600. A file that cannot be read or parsed is ignored
 * (and rewritten at the next live listing); nothing here is ever fatal.
 */
export class CatalogCache implements EraPersistence {
  /** What this process read or wrote last, per file key: so unchanged entries are not rewritten and reads are cheap. */
  private readonly lists = new Map<string, { list: Listed<unknown> | undefined; json?: string; writtenAt?: number }>();
  private readonly eras = new Map<string, { era: EraVerdict | undefined; json?: string }>();
  /** Writes in progress, so shutdown can wait for them (a file half-written is never seen: see write). */
  private readonly pending = new Set<Promise<void>>();

  /**
   * `env`: the workbench's own environment, which an `inheritEnv` server inherits — its credentials key that server's
   * lists (see catalogKey).
   */
  constructor(
    readonly dir: string,
    private readonly log: Logger,
    private readonly env: Readonly<Record<string, string | undefined>> = {},
  ) {}

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
    const items = file?.[kind];
    const listedAt = file ? Date.parse(file.listedAt) : NaN;
    const ok = file && Array.isArray(items) && items.every(valid) && Number.isFinite(listedAt);
    const freshUntil = ok && file.freshUntil !== undefined ? Date.parse(file.freshUntil) : NaN;
    const list: Listed<T> | undefined = ok ? { items: items as T[], listedAt, ...(Number.isFinite(freshUntil) ? { freshUntil } : {}) } : undefined;
    // What this process learned meanwhile wins over the file.
    if (!this.lists.has(key)) this.lists.set(key, { list, ...(list ? { json: JSON.stringify(list.items) } : {}) });
    return this.lists.get(key)!.list as Listed<T> | undefined;
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
    if (!this.eras.has(key)) this.eras.set(key, { era, ...(era ? { json: JSON.stringify(era) } : {}) });
    return this.eras.get(key)!.era;
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

  /** A file of this kind and format, or undefined (missing: quietly; unreadable or another format: with a note). */
  private async load<T extends { format: number; kind: string }>(key: string, kind: T['kind'], label: string): Promise<T | undefined> {
    const path = this.path(key);
    let text: string;
    try {
      text = await readFile(path, 'utf8');
    } catch {
      return undefined;
    }
    try {
      const parsed = JSON.parse(text) as Partial<T>;
      if (parsed.format !== FORMAT || parsed.kind !== kind) {
        this.log.debug(`ignoring the catalog cache file of ${label} (${path}): written by another version; it is rewritten after the server connects`);
        return undefined;
      }
      return parsed as T;
    } catch (error) {
      this.log.warn(`ignoring the catalog cache of ${label} (${path}): ${errorMessage(error)}; it is rewritten after the server connects`);
      return undefined;
    }
  }

  private save(key: string, file: ListFile | EraFile, label: string): Promise<void> {
    const path = this.path(key);
    const done = (async () => {
      try {
        await mkdir(this.dir, { recursive: true, mode: 0o700 });
        // write-file-atomic: temp file beside it, fsync, rename — a reader sees the old file or the new one.
        await writeFileAtomic(path, JSON.stringify(file), { mode: 0o600 });
      } catch (error) {
        this.log.warn(`could not write the catalog cache of ${label} to ${path}: ${errorMessage(error)}`);
      }
    })();
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

import { mkdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import writeFileAtomic from 'write-file-atomic';
import type { Tool } from '@modelcontextprotocol/client';
import { serverCacheKey, type EraPersistence, type EraVerdict } from '../clients/era-memory.js';
import type { ServerConfig } from '../config/types.js';
import { errorMessage } from '../errors.js';
import type { Logger } from '../log.js';

const FORMAT = 1;

/**
 * The directory of the catalog cache (README: "Catalog cache"): `MCP_WORKBENCH_CACHE_DIR`, else
 * `$XDG_CACHE_HOME/mcp-workbench`, else `~/.cache/mcp-workbench`.
 */
export function catalogCacheDir(env: Record<string, string | undefined>, homedir: string): string {
  if (env.MCP_WORKBENCH_CACHE_DIR) return env.MCP_WORKBENCH_CACHE_DIR;
  if (env.XDG_CACHE_HOME) return join(env.XDG_CACHE_HOME, 'mcp-workbench');
  return join(homedir, '.cache', 'mcp-workbench');
}

/**
 * The cache key: a hash of the toolbox and server names and of what decides which program the entry runs —
 * transport, command, args, cwd, URL, and the NAMES of its env variables and headers (never their values, which are
 * often secrets). The same key means the same configured server, so its last tool list is a fair first answer, and
 * its last protocol era a fair first guess. The names are part of it so that two toolboxes listing the same command
 * never answer for each other. (Not the reload key of clients/shared-servers, which compares values too, since a
 * changed value means a restart.)
 */
export const cacheKey = serverCacheKey;

interface CacheFile {
  format: number;
  toolbox: string;
  server: string;
  savedAt: string;
  /** Absent when only the era is known yet. */
  tools?: Tool[];
  /** When the tools stop being a fair answer: a modern server's `ttlMs` hint after the listing (absent: no hint). */
  toolsExpireAt?: string;
  /** The protocol era the server spoke when it last connected (see clients/era-memory). */
  era?: EraVerdict;
}

/** What is known of one entry: as read from disk or last written. */
interface Entry {
  tools?: Tool[];
  /** Epoch ms after which `tools` are not served (a modern server's ttlMs). */
  toolsExpireAt?: number;
  era?: EraVerdict;
  /** The JSON of the last file written or read, so unchanged entries are not rewritten. */
  json?: string;
}

/**
 * Each server's last `tools/list` and protocol era, one file per launch key. The file holds the toolbox and server
 * names, the tools as the server listed them and the era (a modern server's discover result) — no command, args, env
 * values, URLs or headers. A tool list the server marked `cacheScope: "private"` is never given to it (see
 * Discovery). A file that cannot be read or parsed is ignored (and rewritten at the next live listing); nothing here
 * is ever fatal.
 */
export class CatalogCache implements EraPersistence {
  private readonly entries = new Map<string, Entry>();
  /** Writes in progress, so shutdown can wait for them (a file half-written is never seen: see write). */
  private readonly pending = new Set<Promise<void>>();

  constructor(
    readonly dir: string,
    private readonly log: Logger,
  ) {}

  /**
   * The cached tools of a server, or undefined when there are none (or the file is unreadable). Never for an entry
   * that cannot start as configured (`problems`): its tools could be neither checked nor called.
   */
  async read(toolbox: string, server: ServerConfig): Promise<Tool[] | undefined> {
    if (server.problems) return undefined;
    const entry = await this.load(toolbox, server);
    // A modern server said how long its list may be reused (ttlMs): past that it is not a fair first answer.
    if (entry?.toolsExpireAt !== undefined && Date.now() >= entry.toolsExpireAt) return undefined;
    return entry?.tools;
  }

  /** The protocol era the server spoke last time, or undefined. */
  async readEra(toolbox: string, server: ServerConfig): Promise<EraVerdict | undefined> {
    return (await this.load(toolbox, server))?.era;
  }

  /** Persists a server's live tools (atomically) when they differ from what the cache holds. Never throws. */
  write(toolbox: string, server: ServerConfig, tools: readonly Tool[], ttlMs?: number): Promise<void> {
    return this.save(toolbox, server, { tools: [...tools], toolsExpireAt: ttlMs === undefined ? undefined : Date.now() + ttlMs });
  }

  /** Persists the era a server spoke (beside its tools). Never throws. */
  writeEra(toolbox: string, server: ServerConfig, era: EraVerdict): void {
    void this.save(toolbox, server, { era });
  }

  /** Waits for the writes in progress (called on shutdown, so a catalog just listed is not lost). */
  async flush(): Promise<void> {
    await Promise.allSettled([...this.pending]);
  }

  private async load(toolbox: string, server: ServerConfig): Promise<Entry | undefined> {
    const key = cacheKey(toolbox, server);
    const path = this.path(key);
    let text: string;
    try {
      text = await readFile(path, 'utf8');
    } catch {
      return this.entries.get(key);
    }
    try {
      const parsed = JSON.parse(text) as Partial<CacheFile>;
      if (parsed.format !== FORMAT || (parsed.tools !== undefined && (!Array.isArray(parsed.tools) || !parsed.tools.every(isTool)))) {
        throw new Error('not a catalog cache file');
      }
      const era = isEra(parsed.era) ? parsed.era : undefined;
      const expires = typeof parsed.toolsExpireAt === 'string' ? Date.parse(parsed.toolsExpireAt) : NaN;
      const entry: Entry = {
        ...(parsed.tools ? { tools: parsed.tools } : {}),
        ...(Number.isFinite(expires) ? { toolsExpireAt: expires } : {}),
        ...(era ? { era } : {}),
      };
      entry.json = entryJson(entry);
      // What this process learned since wins over the file.
      const known = this.entries.get(key);
      const merged: Entry = { ...entry, ...(known?.tools ? { tools: known.tools, toolsExpireAt: known.toolsExpireAt } : {}), ...(known?.era ? { era: known.era } : {}), json: known?.json ?? entry.json };
      this.entries.set(key, merged);
      return merged;
    } catch (error) {
      this.log.warn(`ignoring the catalog cache of ${toolbox}/${server.name} (${path}): ${errorMessage(error)}; it is rewritten after the server connects`);
      return this.entries.get(key);
    }
  }

  private save(toolbox: string, server: ServerConfig, change: Partial<Pick<Entry, 'tools' | 'toolsExpireAt' | 'era'>>): Promise<void> {
    const key = cacheKey(toolbox, server);
    const previous = this.entries.get(key) ?? {};
    const entry: Entry = { ...previous, ...change };
    const json = entryJson(entry);
    if (previous.json === json) return Promise.resolve();
    entry.json = json;
    this.entries.set(key, entry);
    const file: CacheFile = {
      format: FORMAT,
      toolbox,
      server: server.name,
      savedAt: new Date().toISOString(),
      ...(entry.tools ? { tools: entry.tools } : {}),
      ...(entry.toolsExpireAt !== undefined ? { toolsExpireAt: new Date(entry.toolsExpireAt).toISOString() } : {}),
      ...(entry.era ? { era: entry.era } : {}),
    };
    const path = this.path(key);
    const done = (async () => {
      try {
        await mkdir(this.dir, { recursive: true, mode: 0o700 });
        // write-file-atomic: temp file beside it, fsync, rename — a reader sees the old file or the new one.
        await writeFileAtomic(path, JSON.stringify(file), { mode: 0o600 });
      } catch (error) {
        delete entry.json;
        this.log.warn(`could not write the catalog cache of ${toolbox}/${server.name} to ${path}: ${errorMessage(error)}`);
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

function entryJson(entry: Entry): string {
  return JSON.stringify({ tools: entry.tools, toolsExpireAt: entry.toolsExpireAt, era: entry.era });
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

import { createHash } from 'node:crypto';
import { mkdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import writeFileAtomic from 'write-file-atomic';
import type { Tool } from '@modelcontextprotocol/client';
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
 * often secrets). The same key means the same configured server, so its last tool list is a fair first answer. The
 * names are part of it so that two toolboxes listing the same command never answer for each other. (Not the reload
 * key of clients/shared-servers, which compares values too, since a changed value means a restart.)
 */
export function cacheKey(toolbox: string, server: ServerConfig): string {
  const launch =
    server.type === 'stdio'
      ? { type: server.type, command: server.command, args: server.args, cwd: server.cwd ?? null, env: Object.keys(server.env).sort(), inheritEnv: server.inheritEnv }
      : { type: server.type, url: server.url, headers: Object.keys(server.headers).sort() };
  return createHash('sha256').update(JSON.stringify({ toolbox, server: server.name, launch })).digest('hex');
}

interface CacheFile {
  format: number;
  toolbox: string;
  server: string;
  savedAt: string;
  tools: Tool[];
}

/**
 * Each server's last `tools/list`, one file per launch key. The file holds the toolbox and server names and the tools
 * as the server listed them — no command, args, env values, URLs or headers. A file that cannot be read or parsed is
 * ignored (and rewritten at the next live listing); nothing here is ever fatal.
 */
export class CatalogCache {
  /** Last known tools per launch key (from disk or live), so unchanged lists are not rewritten. */
  private readonly known = new Map<string, string>();
  /** Writes in progress, so shutdown can wait for them (a file half-written is never seen: see write). */
  private readonly pending = new Set<Promise<void>>();

  constructor(
    readonly dir: string,
    private readonly log: Logger,
  ) {}

  /** The cached tools of a server, or undefined when there are none (or the file is unreadable). */
  async read(toolbox: string, server: ServerConfig): Promise<Tool[] | undefined> {
    const key = cacheKey(toolbox, server);
    const path = this.path(key);
    let text: string;
    try {
      text = await readFile(path, 'utf8');
    } catch {
      return undefined;
    }
    try {
      const parsed = JSON.parse(text) as Partial<CacheFile>;
      if (parsed.format !== FORMAT || !Array.isArray(parsed.tools) || !parsed.tools.every(isTool)) throw new Error('not a catalog cache file');
      this.known.set(key, JSON.stringify(parsed.tools));
      return parsed.tools;
    } catch (error) {
      this.log.warn(`ignoring the catalog cache of ${toolbox}/${server.name} (${path}): ${errorMessage(error)}; it is rewritten after the server connects`);
      return undefined;
    }
  }

  /** Persists a server's live tools (atomically) when they differ from what the cache holds. Never throws. */
  write(toolbox: string, server: ServerConfig, tools: readonly Tool[]): Promise<void> {
    const key = cacheKey(toolbox, server);
    const json = JSON.stringify(tools);
    if (this.known.get(key) === json) return Promise.resolve();
    this.known.set(key, json);
    const file: CacheFile = { format: FORMAT, toolbox, server: server.name, savedAt: new Date().toISOString(), tools: [...tools] };
    const path = this.path(key);
    const done = (async () => {
      try {
        await mkdir(this.dir, { recursive: true, mode: 0o700 });
        // write-file-atomic: temp file beside it, fsync, rename — a reader sees the old file or the new one.
        await writeFileAtomic(path, JSON.stringify(file), { mode: 0o600 });
      } catch (error) {
        this.known.delete(key);
        this.log.warn(`could not write the catalog cache of ${toolbox}/${server.name} to ${path}: ${errorMessage(error)}`);
      }
    })();
    this.pending.add(done);
    void done.finally(() => this.pending.delete(done));
    return done;
  }

  /** Waits for the writes in progress (called on shutdown, so a catalog just listed is not lost). */
  async flush(): Promise<void> {
    await Promise.allSettled([...this.pending]);
  }

  private path(key: string): string {
    return join(this.dir, `${key.slice(0, 32)}.json`);
  }
}

function isTool(value: unknown): value is Tool {
  if (typeof value !== 'object' || value === null) return false;
  const tool = value as { name?: unknown; inputSchema?: unknown };
  return typeof tool.name === 'string' && typeof tool.inputSchema === 'object' && tool.inputSchema !== null;
}

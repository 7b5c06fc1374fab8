import type { CatalogCache, Prompt } from '../catalog/catalog-cache.js';
import type { ClientManager } from '../clients/client-manager.js';
import { offers, type FeatureList } from '../clients/server-features.js';
import type { ToolboxConfig } from '../config/types.js';
import { errorMessage } from '../errors.js';
import type { Logger } from '../log.js';
import type { Route } from './feature-books.js';

/**
 * Prompts of cached catalogs (README "Resources, prompts and completions"): each server's last prompt list is kept in
 * the catalog cache beside its tool list — same key, same files' rules — so prompts/list offers the prompts of servers
 * this session has not started, and starts nothing to do so. A live listing (a server connecting, or a prompts/list
 * while it is connected) rewrites it.
 */

/** What the cached prompts of unconnected servers are read from. */
export interface PromptSource {
  manager: ClientManager;
  toolboxes: readonly ToolboxConfig[];
  cache?: CatalogCache;
}

/** One server's cached prompts, and until when they may be kept without asking (0: not at all). */
export interface CachedServerPrompts {
  route: Route;
  toolbox: ToolboxConfig;
  prompts: Prompt[];
  ttlMs: number;
}

/**
 * The cached prompt lists of every configured server that is not connected in this scope and whose last connect did
 * not fail (a failing server is never shown from the cache, as with tools). Reads files only; starts nothing.
 */
export async function cachedPrompts(source: PromptSource, now = Date.now()): Promise<CachedServerPrompts[]> {
  const { cache, manager } = source;
  if (!cache) return [];
  const capabilities = manager.capabilitiesKey();
  const candidates = source.toolboxes.flatMap((toolbox) => {
    const statuses = new Map(manager.serverStatus(toolbox.name).map((s) => [s.server, s.status.state]));
    return toolbox.servers
      .filter((server) => !manager.isConnected(toolbox.name, server.name) && statuses.get(server.name) !== 'failed')
      .map((server) => ({ toolbox, server }));
  });
  const lists = await Promise.all(candidates.map(({ toolbox, server }) => cache.readPrompts(toolbox.name, server, manager.listContext(toolbox.name, server, capabilities))));
  return candidates.flatMap(({ toolbox, server }, i) => {
    const list = lists[i];
    if (!list) return [];
    const ttlMs = list.freshUntil !== undefined ? Math.max(list.freshUntil - now, 0) : 0;
    return [{ route: { toolbox: toolbox.name, server: server.name }, toolbox, prompts: list.prompts, ttlMs }];
  });
}

/** Keeps a server's live prompt list (all pages, every field as listed) in the cache. Never throws. */
export function keepPrompts(source: PromptSource, route: Route, list: FeatureList): void {
  const server = source.toolboxes.find((t) => t.name === route.toolbox)?.servers.find((s) => s.name === route.server);
  if (!source.cache || !server) return;
  const prompts = list.items.filter((p): p is Prompt => typeof p.name === 'string');
  void source.cache.writePrompts(route.toolbox, server, source.manager.listContext(route.toolbox, server), prompts, list.ttlMs);
}

/**
 * A server just connected (or a session first saw it connected): its prompts as listed on connecting — asked for
 * before any call could change them, never as they are now — are kept, unless the cached list is still fresh (a
 * positive ttlMs of the server's) or the server offers no prompts. Failures only cost a debug line.
 */
export async function revalidatePrompts(source: PromptSource, route: Route, log: Logger): Promise<void> {
  const { cache, manager } = source;
  const server = source.toolboxes.find((t) => t.name === route.toolbox)?.servers.find((s) => s.name === route.server);
  const connected = manager.connectedServers(route.toolbox).find((s) => s.server === route.server);
  if (!cache || !server || !offers(connected?.capabilities, 'prompts/list') || !connected?.promptsOnConnect) return;
  try {
    const known = await cache.readPrompts(route.toolbox, server, manager.listContext(route.toolbox, server));
    if (known?.freshUntil !== undefined && known.freshUntil > Date.now()) return;
    const list = await connected.promptsOnConnect;
    if (list) keepPrompts(source, route, list);
  } catch (error) {
    log.debug(`the prompts of server "${route.server}" of toolbox "${route.toolbox}" were not cached: ${errorMessage(error)}`);
  }
}

import { ProtocolError, ProtocolErrorCode } from '@modelcontextprotocol/client';
import type { ClientManager } from '../clients/client-manager.js';
import { featureRequest, listEveryPage, offers, type FeatureList, type ListMethod } from '../clients/server-features.js';
import type { CatalogCache } from '../catalog/catalog-cache.js';
import type { ToolboxConfig } from '../config/types.js';
import { errorMessage, isWorkbenchError } from '../errors.js';
import type { Logger } from '../log.js';
import { SOURCE_META_KEY, type FeatureBooks, type Route } from './feature-books.js';

/** How long one resource, prompt or completion request to a downstream server may take. */
export const FEATURE_TIMEOUT_MS = 60_000;

/**
 * The most a list of the workbench's may be cached by a client of MCP 2026-07-28 (it changes when a toolbox opens),
 * and only when every server it was built from is modern and allows as much.
 */
export const FEATURE_LIST_TTL_MS = 10_000;

/** What the resource, prompt and completion requests of one session work with. */
export interface FeatureScope {
  manager: ClientManager;
  books: FeatureBooks;
  toolboxes: readonly ToolboxConfig[];
  log: Logger;
  /** The catalog cache, for the prompts of servers not started (none: `--no-catalog-cache`). */
  cache?: CatalogCache;
  /**
   * Whether a live list this scope reads (prompts/list) is kept in the cache: the root scope's (one user) is; an
   * isolated session's only as listed on connecting (see revalidatePrompts), since a later one may hold prompts its
   * server added for that session.
   */
  keepsLists: boolean;
}

/** An aggregated list: the items with their source in `_meta`, and a caching hint no looser than any page's. */
export interface AggregatedList {
  items: Record<string, unknown>[];
  ttlMs: number;
  cacheScope: 'private';
}

/**
 * Lists `method` on every connected server of the session that offers it (every page), in config order. A server that
 * fails is left out with a warning in the log: one bad part fails only itself. Each item is passed to `keep` (which
 * may rename or drop it) with its server.
 */
export async function aggregate(
  scope: FeatureScope,
  method: ListMethod,
  keep: (item: Record<string, unknown>, route: Route, config: ToolboxConfig) => Record<string, unknown> | undefined = (item) => item,
  listed?: (route: Route, list: FeatureList) => void,
): Promise<AggregatedList> {
  const targets = scope.toolboxes.flatMap((toolbox) =>
    scope.manager
      .connectedServers(toolbox.name)
      .filter((s) => offers(s.capabilities, method))
      .map((s) => ({ toolbox, route: { toolbox: toolbox.name, server: s.server } })),
  );
  const lists = await Promise.allSettled(
    targets.map(({ route }) => scope.manager.withServer(route.toolbox, route.server, (client) => listEveryPage(client, method, FEATURE_TIMEOUT_MS))),
  );
  // With no server connected yet the list is sure to change (a toolbox opening): not to be kept either.
  const answer: AggregatedList = { items: [], ttlMs: targets.length > 0 ? FEATURE_LIST_TTL_MS : 0, cacheScope: 'private' };
  lists.forEach((outcome, i) => {
    const { toolbox, route } = targets[i]!;
    if (outcome.status === 'rejected') {
      scope.log.warn(`${method} of server "${route.server}" of toolbox "${route.toolbox}" failed, so its items are left out: ${errorMessage(outcome.reason)}`);
      return;
    }
    const list: FeatureList = outcome.value;
    listed?.(route, list);
    if (method !== 'prompts/list') scope.books.noteListing(route.toolbox, route.server, method === 'resources/list' ? 'uris' : 'templates', list.items);
    // A legacy server's page carries no caching hint: nothing says it may be kept, so neither may the whole list.
    answer.ttlMs = Math.min(answer.ttlMs, list.ttlMs ?? 0);
    for (const item of list.items) {
      const kept = keep(item, route, toolbox);
      if (kept) answer.items.push(withSource(kept, route));
    }
  });
  return answer;
}

/** The item with `_meta` naming its toolbox and server (the server's own `_meta` keys kept). */
export function withSource(item: Record<string, unknown>, route: Route): Record<string, unknown> {
  const meta = typeof item._meta === 'object' && item._meta !== null ? (item._meta as Record<string, unknown>) : {};
  return { ...item, _meta: { ...meta, [SOURCE_META_KEY]: { toolbox: route.toolbox, server: route.server } } };
}

/**
 * Sends one request to a routed server (connecting it if need be) and returns its answer as it came. A downstream
 * JSON-RPC error keeps its code, with the server named in the message; a failure to connect or a timeout is an
 * internal error that names the server and what to do.
 */
export async function forwardTo(scope: FeatureScope, route: Route, method: string, params: Record<string, unknown>): Promise<Record<string, unknown>> {
  const where = `server "${route.server}" of toolbox "${route.toolbox}"`;
  try {
    return await scope.manager.withServer(route.toolbox, route.server, (client) => featureRequest(client, method, withoutMeta(params), { timeout: FEATURE_TIMEOUT_MS }));
  } catch (error) {
    if (error instanceof ProtocolError) throw new ProtocolError(error.code, `${where} answered ${method} with an error: ${error.message}`, error.data);
    if (isWorkbenchError(error)) throw new ProtocolError(ProtocolErrorCode.InternalError, `${method} could not reach ${where}: ${error.toDisplayString()}`);
    throw new ProtocolError(ProtocolErrorCode.InternalError, `${method} to ${where} failed: ${errorMessage(error)}. Try again; if it keeps failing, run \`mcp-workbench doctor\`.`);
  }
}

/** The params without the upstream request's `_meta` (progress tokens and envelopes belong to that hop). */
function withoutMeta(params: Record<string, unknown>): Record<string, unknown> {
  const { _meta: _upstream, ...rest } = params;
  return rest;
}

/** A route named by the client in `_meta["mcp-workbench/source"]` as `toolbox/server` or `{ toolbox, server }`. */
export function chosenRoute(scope: FeatureScope, meta: unknown): Route | undefined {
  const chosen = (meta as Record<string, unknown> | undefined)?.[SOURCE_META_KEY];
  if (chosen === undefined) return undefined;
  let route: Route | undefined;
  if (typeof chosen === 'string' && chosen.includes('/')) route = { toolbox: chosen.slice(0, chosen.indexOf('/')), server: chosen.slice(chosen.indexOf('/') + 1) };
  else if (typeof chosen === 'object' && chosen !== null) {
    const { toolbox, server } = chosen as Record<string, unknown>;
    if (typeof toolbox === 'string' && typeof server === 'string') route = { toolbox, server };
  }
  const known = route && scope.toolboxes.find((t) => t.name === route.toolbox)?.servers.some((s) => s.name === route.server);
  if (!route || !known) {
    const servers = scope.toolboxes.flatMap((t) => t.servers.map((s) => `${t.name}/${s.name}`));
    throw new ProtocolError(
      ProtocolErrorCode.InvalidParams,
      `_meta["${SOURCE_META_KEY}"] must name a configured server as "toolbox/server" (one of: ${servers.join(', ') || '(none)'}); got ${JSON.stringify(chosen).slice(0, 200)}.`,
    );
  }
  return route;
}

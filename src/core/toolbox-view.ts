import type { Tool } from '@modelcontextprotocol/client';
import type { ClientManager, FailedServer, ServerTools } from '../clients/client-manager.js';
import { failedServer } from '../clients/server-failure.js';
import type { CachedList } from '../catalog/catalog-cache.js';
import type { CachedServer, FullEntry, PartialServer, PendingServer } from '../catalog/catalog-index.js';
import { ToolboxCatalog, type CatalogTool } from '../catalog/toolbox-catalog.js';
import type { TrustPolicy } from '../catalog/trust.js';
import type { PinUsers } from '../state/trust-policy.js';
import type { VisibilityPolicy } from '../catalog/visibility.js';
import { cachedServer } from './answer-head.js';
import { pendingServer } from './open-wait.js';
import type { ShownLists } from './shown-lists.js';
import type { SearchMemory } from './tool-search.js';

/**
 * What an `open_toolbox` answer is made from (README "open_toolbox"): the servers of a toolbox as they stand when the
 * answer is due — live, shown from their last known list, failed, or still starting — and the catalog of their tools.
 */

/**
 * The connections an answer is made from: one client session's (HTTP sessions each have their own servers), with the
 * catalog of live tools that `use_tool` resolves against, its entries in the same order, and what the session was
 * shown (for `catalog_changes`).
 */
export interface DiscoveryScope {
  manager: ClientManager;
  liveCatalog: (toolbox: string) => { catalog: ToolboxCatalog; entries: readonly FullEntry[] };
  shown: ShownLists;
  /** What this scope's searches have seen of each toolbox: the hints and the bridge of its searches come from it. */
  search: SearchMemory;
}

/** What an answer is made from: one toolbox, or a toolset's tools across several (`member` says which). */
export interface View {
  connected: string[];
  failed: FailedServer[];
  /** Servers shown from their last known list while they connect (or not at all, while fresh). */
  cached?: CachedServer[];
  /** Servers still starting when the answer was due. */
  pending?: PendingServer[];
  /** Connected servers whose tools shown are not all they listed. */
  partial?: PartialServer[];
  catalogs: ToolboxCatalog[];
  entries: readonly FullEntry[];
  /** For a toolset: whether a canonical name belongs to it. */
  member?: (name: string) => boolean;
}

/** The view of a toolbox a search's qualifiers leave out entirely. */
export const nothing = (): View => ({ connected: [], failed: [], catalogs: [], entries: [] });

/** Every server connected: the session's live catalog. */
export function liveView(scope: DiscoveryScope, name: string, connected: string[]): View {
  const { catalog, entries } = scope.liveCatalog(name);
  const listed = scope.manager.serverTools(name);
  for (const { server, tools } of listed) scope.shown.record(name, server, tools);
  return { connected, failed: [], catalogs: [catalog], entries, partial: partialServers(listed) };
}

/** The connected servers (of `only`, when given) whose list shown is not all they listed, each with why. */
function partialServers(listed: readonly ServerTools[], only?: ReadonlySet<string>): PartialServer[] {
  return listed.filter((s) => s.notes.length > 0 && (!only || only.has(s.server))).map((s) => ({ server: s.server, note: s.notes.join('; ') }));
}

/** How tools become catalog entries: which are visible, whether definitions are approved, the entry of each. */
export interface CatalogMaking {
  policy: () => VisibilityPolicy;
  /** The trust policy for the pins of the users a session's connections serve (`scope.manager`). */
  trust?: (users: PinUsers) => TrustPolicy | undefined;
  toEntry: (tool: CatalogTool) => FullEntry;
}

/** What the connects of a view found: last known lists, failed connects, and which servers it is about (`only`). */
export interface ViewState {
  cached: ReadonlyMap<string, CachedList>;
  failed: ReadonlyMap<string, FailedServer>;
  searching: boolean;
  only?: ReadonlySet<string> | undefined;
  /** A server's last failed start (before the attempt under way), which a server still starting is shown with. */
  lastFailure?: (server: string) => { failed: FailedServer; at: number } | undefined;
}

/** Live servers, last known lists, failures and servers still starting, as they stand now. */
export function mixedView(making: CatalogMaking, scope: DiscoveryScope, name: string, { cached, failed, searching, only, lastFailure }: ViewState): View {
  const { manager } = scope;
  const now = Date.now();
  const listed = manager.serverTools(name);
  const live = new Map(listed.map((s) => [s.server, s.tools]));
  const statuses = manager.serverStatus(name).filter((s) => !only || only.has(s.server));
  if (!only && statuses.every((s) => live.has(s.server))) return liveView(scope, name, statuses.map((s) => s.server));
  const view: Required<Pick<View, 'connected' | 'failed' | 'cached' | 'pending'>> = { connected: [], failed: [], cached: [], pending: [] };
  const servers: { server: string; tools: readonly Tool[] }[] = [];
  for (const { server, status } of statuses) {
    const tools = live.get(server);
    const last = cached.get(server);
    if (tools) {
      view.connected.push(server);
      servers.push({ server, tools });
    } else if (last) {
      // A search starts nothing, but a check already under way (an open's) is still one.
      view.cached.push(cachedServer(server, last, now, searching && status.state !== 'starting'));
      servers.push({ server, tools: last.tools });
    } else if (failed.has(server)) {
      view.failed.push(failed.get(server)!);
    } else if (status.state === 'failed') {
      view.failed.push(failedServer(server, status.error));
    } else {
      // A start that failed under use_tool (never booked by an open) is the server's last failure too.
      const before = status.state === 'starting' && status.lastFailure ? { failed: failedServer(server, status.lastFailure.error), at: status.lastFailure.at } : undefined;
      view.pending.push(pendingServer(server, status.state === 'starting' ? status.since : now, now, lastFailure?.(server) ?? before));
    }
  }
  for (const { server, tools } of servers) scope.shown.record(name, server, tools);
  const catalog = new ToolboxCatalog(name, servers, making.policy(), making.trust?.(manager));
  return { ...view, catalogs: [catalog], entries: catalog.tools.map(making.toEntry), partial: partialServers(listed, only) };
}

/** Server entries of one toolbox named `toolbox/server`, as answers about several toolboxes name them. */
export function inToolbox<T extends { server: string }>(list: readonly T[] | undefined, toolbox: string): T[] {
  return (list ?? []).map((x) => ({ ...x, server: `${toolbox}/${x.server}` }));
}

import type { Tool } from '@modelcontextprotocol/client';
import { MODEL_STEPS, type NextSteps } from './next-steps.js';
import type { ClientManager, FailedServer } from '../clients/client-manager.js';
import type { ServerConfig, ToolboxConfig, WorkbenchConfig } from '../config/types.js';
import { WorkbenchError } from '../errors.js';
import { quoteClientText } from '../shared/client-text.js';
import type { CachedList, CatalogCache } from '../catalog/catalog-cache.js';
import {
  DEFAULT_CATALOG_BUDGET,
  budgetCatalog,
  budgetMatches,
  type AnswerHead,
  type BudgetedAnswer,
  type CatalogChange,
  type FullEntry,
} from '../catalog/catalog-index.js';
import { DEFAULT_SEARCH_LIMIT } from '../catalog/search.js';
import { ToolboxCatalog, type CatalogTool } from '../catalog/toolbox-catalog.js';
import type { ResolvedToolset } from '../catalog/toolsets.js';
import type { TrustPolicy } from '../catalog/trust.js';
import type { PinUsers } from '../state/trust-policy.js';
import type { VisibilityPolicy } from '../catalog/visibility.js';
import { namedTools, notFoundExtra } from './named-tools.js';
import { cachedHead, optional, unapprovedHead } from './answer-head.js';
import { boundedHead } from './head-bounds.js';
import { inToolbox, liveView, mixedView, nothing, type DiscoveryScope, type View } from './toolbox-view.js';
import { FailedConnects } from './failed-connects.js';
import { waitForServers, worthWaiting, type OpenProgress } from './open-wait.js';
import { SearchMemory, ToolSearch } from './tool-search.js';
import { searchReach } from './search-reach.js';
import type { ShownLists } from './shown-lists.js';
import { toolboxSetting } from '../config/toolbox-setting.js';
import { parseQuery } from '../catalog/search-query.js';
import type { Logger } from '../log.js';

/** What `open_toolbox` was asked (parameters already checked for type; see README "open_toolbox"). */
export interface OpenToolboxRequest {
  toolbox_name?: string;
  tools?: string[];
  query?: string;
  limit?: number;
  detail?: 'full' | 'index';
  /** Offset from a previous answer's `next_cursor`. */
  cursor?: number;
}

export interface DiscoveryOptions {
  /** The config in effect (it changes on a reload). */
  config: () => WorkbenchConfig;
  policy: () => VisibilityPolicy;
  /** Whether tool definitions are the approved ones (README "Pinned tool definitions"); none: no checks. */
  trust?: (users: PinUsers) => TrustPolicy | undefined;
  toEntry: (tool: CatalogTool) => FullEntry;
  /** Off when undefined (`--no-catalog-cache`). */
  cache?: CatalogCache;
  /** `--catalog-budget`: beats the config's top-level `catalogBudget`, not a toolbox's own. */
  budget?: number;
  /** Where the semantic ranker says it is down (README "Search"); without it that ranker is off. */
  log?: Logger;
}


/** How open_toolbox may wait: progress to report while servers start. */
export interface OpenOptions {
  onprogress?: (progress: OpenProgress) => void;
  /** Who asked, for the debug and audit logs: an HTTP session id, `stdio`, or nothing for the CLI. */
  sessionLabel?: string;
  /** Who the client is, for the debug and audit logs (never a token). */
  principal?: string;
  /** What an unknown toolbox's error says to do next: a person at the CLI runs a command; default: the model's (MODEL_STEPS). */
  steps?: NextSteps;
}


/** open_toolbox's default wait for servers that are still starting (README "open_toolbox"). */
export const DEFAULT_OPEN_WAIT_MS = 5_000;


/**
 * Answers `open_toolbox`: the catalog under the context budget (full, or a compact index), full entries for named
 * tools, or search results. It never waits past the toolbox's `openWaitMs` for a server: servers with a last known
 * list (the catalog cache) are shown from it at once and revalidated in the background; the others are waited for
 * until the deadline, then named with their state while they keep connecting. Calls never use what this serves from
 * the cache: `use_tool` resolves against the live catalog.
 */
export class Discovery {
  /** The servers whose last connect failed, per scope (see FailedConnects). */
  private readonly failing = new FailedConnects();

  private readonly search: ToolSearch;

  constructor(private readonly options: DiscoveryOptions) {
    this.search = new ToolSearch({ config: options.config, ...(options.cache && { cacheDir: options.cache.dir }), ...(options.log && { log: options.log }) });
  }

  /** Whether the user lets the session see a tool (catalog_changes name no other). */
  private readonly visible = (toolbox: string, server: string, tool: string): boolean => this.options.policy().check(toolbox, server, tool).enabled;

  /** Waits for search vectors being written (on shutdown). */
  flush(): Promise<void> {
    return this.search.flush();
  }

  /**
   * A server's live tools changed (connected, refreshed, lost): the session hears what differs from what it was shown,
   * and, when `keep`, the list is persisted to the cache (keyed by the capabilities it was listed for).
   */
  toolsChanged(manager: ClientManager, toolbox: string, server: string, shown: ShownLists | undefined, keep: boolean): void {
    const listed = manager.serverTools(toolbox).find((s) => s.server === server);
    shown?.observe(toolbox, server, listed?.tools);
    const config = this.options.config().toolboxes.find((t) => t.name === toolbox)?.servers.find((s) => s.name === server);
    if (!listed || !config) return;
    this.failing.clear(manager, toolbox, server);
    if (keep) void this.options.cache?.write(toolbox, config, manager.listContext(toolbox, config, listed.capabilitiesKey), listed.tools, listed.ttlMs);
  }

  /**
   * The budget of characters for an answer about this toolbox (or about all of them). The project file only narrows
   * (README "Project file"): its budget lowers the one in force, never raises it.
   */
  budget(toolbox?: string): number {
    const config = this.options.config();
    const own = toolbox === undefined ? undefined : config.toolboxes.find((t) => t.name === toolbox)?.catalogBudget;
    const budget = own ?? this.options.budget ?? config.catalogBudget ?? DEFAULT_CATALOG_BUDGET;
    return Math.min(budget, config.project?.catalogBudget ?? budget);
  }

  /** How long open_toolbox waits for this toolbox's servers that are still starting. */
  openWait(toolbox: string): number {
    return toolboxSetting(this.options.config(), toolbox, 'openWaitMs') ?? DEFAULT_OPEN_WAIT_MS;
  }

  /** `open_toolbox` for a toolbox, or (without `toolbox_name`) a search of every toolbox. */
  async open(request: OpenToolboxRequest, scope: DiscoveryScope, options: OpenOptions = {}): Promise<BudgetedAnswer> {
    if (request.toolbox_name === undefined) return this.searchEverywhere(request, scope, options);
    const toolbox = this.toolbox(request.toolbox_name, options.steps);
    const searching = request.query !== undefined;
    // A search's qualifiers may leave out some of the toolbox's servers, or all of them (then nothing is started).
    const reach = searching ? searchReach([toolbox], parseQuery(request.query!)) : [{ toolbox: toolbox.name }];
    const view = reach[0] ? await this.view(toolbox.name, scope, options, searching, reach[0].only) : nothing();
    const others = searching ? () => this.learnOthers(toolbox.name, scope) : undefined;
    const answer = await this.answer(request, { toolbox: toolbox.name, description: toolbox.description }, view, this.budget(toolbox.name), scope.shown, { memory: scope.search, others });
    // A toolbox none of whose servers can serve: an error the model can read (each reason is in servers_failed).
    if (view.failed.length > 0 && view.connected.length === 0 && !view.cached?.length && !view.pending?.length) return { ...answer, isError: true };
    return answer;
  }

  /**
   * A search of every toolbox and toolset (README "open_toolbox", Search): servers with a last known list are searched
   * in it and not started; the rest are connected now, within the deadline. Servers that cannot start are named with
   * why and what to do; the answer is never an error for them.
   */
  private async searchEverywhere(request: OpenToolboxRequest, scope: DiscoveryScope, options: OpenOptions): Promise<BudgetedAnswer> {
    const reach = searchReach(this.options.config().toolboxes, parseQuery(request.query ?? ''));
    const names = reach.map((r) => r.toolbox);
    const views = await Promise.all(reach.map((r) => this.view(r.toolbox, scope, options, true, r.only)));
    const changes = scope.shown.take(this.visible);
    const whole: AnswerHead = {
      toolbox: '*',
      description: 'Search across every toolbox',
      servers_connected: views.flatMap((v, i) => v.connected.filter((s) => !reach[i]!.only || reach[i]!.only!.has(s)).map((s) => `${names[i]}/${s}`)),
      servers_failed: views.flatMap((v, i) => inToolbox(v.failed, names[i]!)),
      ...cachedHead(views.flatMap((v, i) => inToolbox(v.cached, names[i]!))),
      ...optional('servers_pending', views.flatMap((v, i) => inToolbox(v.pending, names[i]!))),
      ...optional('servers_partial', views.flatMap((v, i) => inToolbox(v.partial, names[i]!))),
      ...optional('catalog_changes', changes),
      ...unapprovedHead(views.flatMap((v) => v.catalogs)),
    };
    const budget = request.detail === 'full' ? Infinity : this.budget();
    const head = this.bounded(whole, budget, scope.shown, changes);
    const indexes = views.map((v, i) => this.search.indexOf(scope.search, names[i], v.entries));
    const { matches, extra } = await this.search.search(scope.search, undefined, indexes, request.query ?? '', request.limit ?? DEFAULT_SEARCH_LIMIT);
    return budgetMatches(head, matches, budget, extra);
  }

  /**
   * The answer about one view (a toolbox, or a toolset's tools): the catalog under the budget, full entries for named
   * tools, or search results. `shown`: what the session was shown, whose changes the answer tells (none: no
   * changes are told). `searching`, for a search: what the asking scope knows of other toolboxes (`memory`, see
   * SearchMemory; none: nothing), and `others`, which makes their last known tools searchable for the hint of a search
   * that finds nothing.
   */
  async answer(
    request: OpenToolboxRequest,
    about: { toolbox: string; description: string },
    view: View,
    ownBudget: number,
    shown?: ShownLists,
    searching: { memory?: SearchMemory; others?: () => Promise<void> } = {},
  ): Promise<BudgetedAnswer> {
    const budget = request.detail === 'full' ? Infinity : ownBudget;
    const limit = request.limit ?? DEFAULT_SEARCH_LIMIT;
    const changes = shown?.take(this.visible) ?? [];
    const head = this.bounded(
      {
        ...about,
        servers_connected: view.connected,
        servers_failed: view.failed,
        ...cachedHead(view.cached ?? []),
        ...optional('servers_pending', view.pending ?? []),
        ...optional('servers_partial', view.partial ?? []),
        ...optional('catalog_changes', changes),
        ...unapprovedHead(view.catalogs, view.member),
      },
      budget,
      shown,
      changes,
    );
    if (request.tools !== undefined) {
      const { entries, notFound } = namedTools(view, request.tools);
      return budgetMatches(head, entries, budget, notFoundExtra(notFound));
    }
    if (request.query !== undefined) {
      const toolbox = this.options.config().toolboxes.some((t) => t.name === about.toolbox) ? about.toolbox : undefined;
      const memory = searching.memory ?? new SearchMemory();
      const { matches, extra } = await this.search.search(memory, toolbox, [this.search.indexOf(memory, toolbox, view.entries)], request.query, limit, searching.others);
      return budgetMatches(head, matches, budget, extra);
    }
    return budgetCatalog(head, view.entries, { budget, detail: request.detail, cursor: request.cursor });
  }

  /**
   * The toolbox as it can be shown now. Connected servers: live. Not connected but with a last known list (and no
   * failed connect since): that list, at once, with the server connected in the background unless its list is still
   * fresh. The rest: connected now, waited for until the toolbox's `openWaitMs`, then shown as
   * failed or still starting.
   */
  private async view(name: string, scope: DiscoveryScope, options: OpenOptions, searching = false, only?: ReadonlySet<string>): Promise<View> {
    const { manager } = scope;
    const toolbox = this.toolbox(name);
    const unconnected = toolbox.servers.filter((s) => !manager.isConnected(name, s.name) && (!only || only.has(s.name)));
    if (unconnected.length === 0) {
      // Lists a modern server said not to reuse any longer (ttlMs) are read again before they are shown.
      await manager.refreshExpired(name);
      return liveView(scope, name, only ? [...only] : toolbox.servers.map((s) => s.name));
    }
    const capabilities = manager.capabilitiesKey();
    const cached = new Map<string, CachedList>();
    if (this.options.cache) {
      const lists = await Promise.all(
        unconnected.map((s) => (this.failing.has(manager, name, s.name) ? undefined : this.options.cache!.read(name, s, manager.listContext(name, s, capabilities)))),
      );
      unconnected.forEach((s, i) => lists[i] && cached.set(s.name, lists[i]!));
    }
    const now = Date.now();
    const failed = new Map<string, FailedServer>();
    const connects = new Map<string, Promise<unknown>>();
    for (const server of unconnected) {
      if (cached.has(server.name)) continue;
      const failure = searching ? this.failing.recent(manager, name, server.name, now) : undefined;
      if (failure) {
        failed.set(server.name, failure);
        continue;
      }
      connects.set(server.name, manager.connectServer(name, server.name).then((failure) => this.settled(manager, name, server.name, failure, failed)));
    }
    // A search does not start a server for its last known list: opening the toolbox or calling a tool checks it.
    const revalidate = searching ? [] : unconnected.filter((s) => cached.has(s.name) && !((cached.get(s.name)!.freshUntil ?? 0) > now));
    // Spawning takes milliseconds per server: start the revalidations after this answer has gone out.
    if (revalidate.length > 0) {
      setImmediate(() => {
        for (const s of revalidate) void manager.connectServer(name, s.name).then((failure) => this.settled(manager, name, s.name, failure, new Map()));
      });
    }
    const wait = this.openWait(name);
    await waitForServers(worthWaiting(connects, manager.serverStatus(name), wait, now), wait, only?.size ?? toolbox.servers.length, options.onprogress);
    const lastFailure = (server: string): { failed: FailedServer; at: number } | undefined => this.failing.last(manager, name, server);
    return mixedView(this.options, scope, name, { cached, failed, searching, only, lastFailure });
  }

  /**
   * A search inside a toolset: each toolbox it reaches is viewed as a search views a toolbox (last known lists, starting
   * only its servers without one, within the deadline), limited to the toolset's servers; the answer holds only the
   * toolset's tools. Server labels are `toolbox/server`, as when the toolset is opened without a query.
   */
  async searchToolset(request: OpenToolboxRequest, toolset: ResolvedToolset, scope: DiscoveryScope, options: OpenOptions = {}): Promise<BudgetedAnswer> {
    const servers = new Map<string, Set<string>>();
    // A search's `toolbox:`/`server:` qualifiers narrow the servers it reaches here too (see search-reach).
    const parsed = request.query !== undefined ? parseQuery(request.query) : undefined;
    const reached = ({ toolbox, server }: { toolbox: string; server: string }): boolean => !parsed || ((!parsed.toolbox || parsed.toolbox(toolbox)) && (!parsed.server || parsed.server(server)));
    for (const s of toolset.servers.filter(reached)) servers.set(s.toolbox, (servers.get(s.toolbox) ?? new Set()).add(s.server));
    const names = [...servers.keys()];
    const views = await Promise.all(names.map((name) => this.view(name, scope, options, true, servers.get(name))));
    const view: View = {
      connected: views.flatMap((v, i) => v.connected.filter((server) => servers.get(names[i]!)!.has(server)).map((server) => `${names[i]}/${server}`)),
      failed: views.flatMap((v, i) => inToolbox(v.failed, names[i]!)),
      cached: views.flatMap((v, i) => inToolbox(v.cached, names[i]!)),
      pending: views.flatMap((v, i) => inToolbox(v.pending, names[i]!)),
      partial: views.flatMap((v, i) => inToolbox(v.partial, names[i]!)),
      catalogs: views.flatMap((v) => v.catalogs),
      entries: views.flatMap((v) => v.entries.filter((entry) => toolset.includes(entry.name))),
      member: (tool) => toolset.includes(tool),
    };
    return this.answer(request, { toolbox: toolset.config.name, description: toolset.config.description }, view, this.budget(), scope.shown, { memory: scope.search });
  }

  /**
   * Makes every other toolbox's tools searchable as last known (live lists, else cached ones), starting nothing: for
   * the hint of a search that found nothing in its own toolbox.
   */
  private async learnOthers(except: string, scope: DiscoveryScope): Promise<void> {
    for (const toolbox of this.options.config().toolboxes) {
      if (toolbox.name === except) continue;
      const servers: { server: string; tools: readonly Tool[] }[] = [];
      for (const s of toolbox.servers) {
        const known = await this.lastKnown(scope.manager, toolbox.name, s);
        if (known) servers.push({ server: s.name, tools: known });
      }
      if (servers.length === 0) continue;
      const catalog = new ToolboxCatalog(toolbox.name, servers, this.options.policy(), this.options.trust?.(scope.manager));
      this.search.indexOf(scope.search, toolbox.name, catalog.tools.map(this.options.toEntry));
    }
  }

  /** A server's tools as this session last knew them: live, else cached (never for a server failing to start). */
  async lastKnown(manager: ClientManager, toolbox: string, server: ServerConfig): Promise<readonly Tool[] | undefined> {
    const live = manager.serverTools(toolbox).find((s) => s.server === server.name);
    if (live) return live.tools;
    if (this.failing.has(manager, toolbox, server.name)) return undefined;
    return (await this.options.cache?.read(toolbox, server, manager.listContext(toolbox, server)))?.tools;
  }



  /**
   * The head bounded to the budget (see boundedHead); the catalog changes it had no room for are kept for the session's
   * next answer, so none is lost.
   */
  private bounded(head: AnswerHead, budget: number, shown: ShownLists | undefined, changes: readonly CatalogChange[]): AnswerHead {
    const bounded = boundedHead(head, budget);
    if (shown && changes.length > 0) {
      const told = new Set((bounded.catalog_changes ?? []).map((c) => `${c.toolbox}/${c.server}`));
      shown.putBack(changes.filter((c) => !told.has(`${c.toolbox}/${c.server}`)));
    }
    return bounded;
  }

  /** Books a connect's outcome: a failure is shown (and keeps the server off the cache until a connect succeeds). */
  private settled(manager: ClientManager, toolbox: string, server: string, failure: WorkbenchError | undefined, failed: Map<string, FailedServer>): void {
    if (failure) failed.set(server, this.failing.record(manager, toolbox, server, failure));
  }

  private toolbox(name: string, steps: NextSteps = MODEL_STEPS): ToolboxConfig {
    const config = this.options.config();
    const toolbox = config.toolboxes.find((t) => t.name === name);
    if (!toolbox) {
      const names = [...config.toolboxes.map((t) => t.name), ...(config.toolsets ?? []).map((t) => t.name)].join(', ') || '(none configured)';
      throw new WorkbenchError('TOOLBOX_NOT_FOUND', `Unknown toolbox ${quoteClientText(name)}. Available toolboxes and toolsets: ${names}.`, { hint: steps.pickToolbox('open', 'toolbox').hint });
    }
    return toolbox;
  }
}


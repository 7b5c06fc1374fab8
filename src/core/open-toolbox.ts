import type { Tool } from '@modelcontextprotocol/client';
import type { ClientManager, FailedServer } from '../clients/client-manager.js';
import type { ToolboxConfig, WorkbenchConfig } from '../config/types.js';
import { WorkbenchError } from '../errors.js';
import { quoteClientText } from '../shared/client-text.js';
import type { CatalogCache } from '../catalog/catalog-cache.js';
import {
  DEFAULT_CATALOG_BUDGET,
  budgetCatalog,
  budgetMatches,
  type Answer,
  type AnswerHead,
  type BudgetedAnswer,
  type FullEntry,
} from '../catalog/catalog-index.js';
import { compileGlob } from '../shared/glob.js';
import { DEFAULT_SEARCH_LIMIT, searchIndex, searchTools } from '../catalog/search.js';
import { ToolboxCatalog, type CatalogTool } from '../catalog/toolbox-catalog.js';
import type { VisibilityPolicy } from '../catalog/visibility.js';

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

/** What an `open_toolbox` request brings besides its parameters. */
export interface OpenToolboxOptions {
  /** Sends `notifications/progress` for this request, with its progress token (a no-op when the client gave none). */
  onprogress?: (progress: { progress: number; total?: number; message?: string }) => void;
}

export interface DiscoveryOptions {
  /** The config in effect (it changes on a reload). */
  config: () => WorkbenchConfig;
  policy: () => VisibilityPolicy;
  toEntry: (tool: CatalogTool) => FullEntry;
  /** Off when undefined (`--no-catalog-cache`). */
  cache?: CatalogCache;
  /** `--catalog-budget`: beats the config's top-level `catalogBudget`, not a toolbox's own. */
  budget?: number;
}

/**
 * The connections an answer is made from: one client session's (HTTP sessions each have their own servers), with the
 * catalog of live tools that `use_tool` resolves against, its entries in the same order.
 */
export interface DiscoveryScope {
  manager: ClientManager;
  liveCatalog: (toolbox: string) => { catalog: ToolboxCatalog; entries: readonly FullEntry[] };
}

/** What an answer is made from: one toolbox, or a toolset's tools across several (`member` says which). */
export interface View {
  connected: string[];
  failed: FailedServer[];
  catalogs: ToolboxCatalog[];
  entries: readonly FullEntry[];
  /** For a toolset: whether a canonical name belongs to it. */
  member?: (name: string) => boolean;
}

/**
 * Answers `open_toolbox`: the catalog under the context budget (full, or a compact index), full entries for named
 * tools, or search results — from the live catalog, or from the catalog cache while the servers connect in the
 * background. Calls never use what this serves from the cache: `use_tool` resolves against the live catalog.
 */
export class Discovery {
  /** Cached tools per `toolbox/server` (null: none on disk), read once and replaced by every live listing. */
  private readonly seeds = new Map<string, Tool[] | null>();
  /** Servers whose last connect failed: never presented from the cache until one succeeds. */
  private readonly failing = new Set<string>();

  constructor(private readonly options: DiscoveryOptions) {}

  /** A server's live tools changed (connected, refreshed, lost): remember them and persist them to the cache. */
  toolsChanged(manager: ClientManager, toolbox: string, server: string): void {
    const listed = manager.serverTools(toolbox).find((s) => s.server === server);
    const tools = listed?.tools;
    const config = this.options.config().toolboxes.find((t) => t.name === toolbox)?.servers.find((s) => s.name === server);
    if (!tools || !config || !this.options.cache) return;
    this.failing.delete(`${toolbox}/${server}`);
    // A list the server marked private is per-user: never written to disk nor served to anyone from it.
    if (listed?.cacheScope === 'private') {
      this.seeds.set(`${toolbox}/${server}`, null);
      return;
    }
    this.seeds.set(`${toolbox}/${server}`, tools);
    void this.options.cache.write(toolbox, config, tools, listed?.ttlMs);
  }

  /** The budget of characters for an answer about this toolbox (or about all of them). */
  budget(toolbox?: string): number {
    const config = this.options.config();
    const own = toolbox === undefined ? undefined : config.toolboxes.find((t) => t.name === toolbox)?.catalogBudget;
    return own ?? this.options.budget ?? config.project?.catalogBudget ?? config.catalogBudget ?? DEFAULT_CATALOG_BUDGET;
  }

  /** `open_toolbox` for a toolbox, or (without `toolbox_name`) a search of every toolbox. */
  async open(request: OpenToolboxRequest, scope: DiscoveryScope, _options?: OpenToolboxOptions): Promise<BudgetedAnswer> {
    if (request.toolbox_name === undefined) {
      // Search everywhere: cached catalogs where present, the rest connected now.
      const names = this.options.config().toolboxes.map((t) => t.name);
      const views = await Promise.all(names.map((name) => this.view(name, scope)));
      const head: AnswerHead = {
        toolbox: '*',
        description: 'Search across every toolbox',
        servers_connected: views.flatMap((v, i) => v.connected.map((s) => `${names[i]}/${s}`)),
        servers_failed: views.flatMap((v, i) => v.failed.map((f) => ({ ...f, server: `${names[i]}/${f.server}` }))),
      };
      const budget = request.detail === 'full' ? Infinity : this.budget();
      const matches = searchTools(views.map((v) => searchIndex(v.entries)), request.query ?? '', request.limit ?? DEFAULT_SEARCH_LIMIT);
      return budgetMatches(head, matches, budget, noMatchHint(matches));
    }
    const toolbox = this.toolbox(request.toolbox_name);
    const view = await this.view(toolbox.name, scope);
    return this.answer(request, { toolbox: toolbox.name, description: toolbox.description }, view, this.budget(toolbox.name));
  }

  /**
   * The answer about one view (a toolbox, or a toolset's tools): the catalog under the budget, full entries for named
   * tools, or search results.
   */
  answer(request: OpenToolboxRequest, about: { toolbox: string; description: string }, view: View, ownBudget: number): BudgetedAnswer {
    const budget = request.detail === 'full' ? Infinity : ownBudget;
    const limit = request.limit ?? DEFAULT_SEARCH_LIMIT;
    const head: AnswerHead = { ...about, servers_connected: view.connected, servers_failed: view.failed };
    if (request.tools !== undefined) {
      const { entries, notFound } = this.resolve(view, request.tools);
      return budgetMatches(head, entries, budget, notFound.length > 0 ? { not_found: notFound } : {});
    }
    if (request.query !== undefined) {
      const matches = searchTools([searchIndex(view.entries)], request.query, limit);
      return budgetMatches(head, matches, budget, noMatchHint(matches));
    }
    return budgetCatalog(head, view.entries, { budget, detail: request.detail, cursor: request.cursor });
  }

  /** Named tools (canonical, bare, `-`/`_` variants, globs) in the order asked, each once. */
  private resolve(view: View, names: readonly string[]): { entries: FullEntry[]; notFound: NonNullable<Answer['not_found']> } {
    const byName = new Map(view.entries.map((e) => [e.name, e]));
    const member = view.member ?? (() => true);
    const picked = new Map<string, FullEntry>();
    const notFound: NonNullable<Answer['not_found']> = [];
    for (const name of names) {
      let found: CatalogTool[] = [];
      if (/[*?]/.test(name)) {
        const match = compileGlob(name);
        found = view.catalogs.flatMap((c) => c.tools.filter((t) => member(t.name) && (match(t.name) || match(t.tool.name))));
        if (found.length === 0) notFound.push({ name, suggestions: [] });
      } else {
        const suggestions: string[] = [];
        for (const catalog of view.catalogs) {
          const lookup = catalog.find(name);
          if ('found' in lookup) found.push(lookup.found);
          else if ('ambiguous' in lookup) found.push(...lookup.ambiguous);
          else if ('notFound' in lookup) suggestions.push(...lookup.suggestions.filter(member));
        }
        found = found.filter((t) => member(t.name));
        // A disabled tool is not offered: it is reported like an unknown one, without suggestions.
        if (found.length === 0) notFound.push({ name, suggestions: suggestions.slice(0, 5) });
      }
      for (const t of found) {
        const entry = byName.get(t.name);
        if (entry) picked.set(entry.name, entry);
      }
    }
    return { entries: [...picked.values()], notFound };
  }

  /**
   * The toolbox as it can be shown now: live when every server is connected; from the cache when every other server
   * has a cached catalog (and did not just fail), connecting them in the background; else connected first.
   */
  private async view(name: string, scope: DiscoveryScope): Promise<View> {
    const { cache } = this.options;
    const { manager } = scope;
    const toolbox = this.toolbox(name);
    const unconnected = toolbox.servers.filter((s) => !manager.isConnected(name, s.name));
    if (unconnected.length > 0 && cache) {
      const seeds = await Promise.all(unconnected.map(async (s) => (this.failing.has(`${name}/${s.name}`) ? undefined : this.seed(name, s.name))));
      if (seeds.every((s) => s !== undefined)) {
        const live = new Map(manager.serverTools(name).map((s) => [s.server, s.tools]));
        const servers = toolbox.servers.map((s) => ({ server: s.name, tools: live.get(s.name) ?? seeds[unconnected.indexOf(s)]! }));
        const catalog = new ToolboxCatalog(name, servers, this.options.policy());
        // Spawning takes milliseconds per server: start it after this answer has gone out.
        setImmediate(() => void manager.openToolbox(name).then((opened) => this.noteOpened(name, opened.failed), () => {}));
        return { connected: toolbox.servers.map((s) => s.name), failed: [], catalogs: [catalog], entries: catalog.tools.map(this.options.toEntry) };
      }
    }
    const opened = unconnected.length > 0 ? await manager.openToolbox(name) : { connected: toolbox.servers.map((s) => s.name), failed: [] };
    // Lists a modern server said not to reuse any longer (ttlMs) are read again before they are shown.
    if (unconnected.length === 0) await manager.refreshExpired(name);
    this.noteOpened(name, opened.failed);
    const { catalog, entries } = scope.liveCatalog(name);
    return { connected: opened.connected, failed: opened.failed, catalogs: [catalog], entries };
  }

  private noteOpened(toolbox: string, failed: readonly { server: string }[]): void {
    for (const f of failed) this.failing.add(`${toolbox}/${f.server}`);
  }

  private async seed(toolbox: string, server: string): Promise<Tool[] | undefined> {
    const key = `${toolbox}/${server}`;
    if (!this.seeds.has(key)) {
      const config = this.toolbox(toolbox).servers.find((s) => s.name === server);
      if (!config) return undefined;
      this.seeds.set(key, (await this.options.cache!.read(toolbox, config)) ?? null);
    }
    return this.seeds.get(key) ?? undefined;
  }

  private toolbox(name: string): ToolboxConfig {
    const config = this.options.config();
    const toolbox = config.toolboxes.find((t) => t.name === name);
    if (!toolbox) {
      const names = [...config.toolboxes.map((t) => t.name), ...(config.toolsets ?? []).map((t) => t.name)].join(', ') || '(none configured)';
      throw new WorkbenchError('TOOLBOX_NOT_FOUND', `Unknown toolbox ${quoteClientText(name)}. Available toolboxes and toolsets: ${names}.`);
    }
    return toolbox;
  }
}

function noMatchHint(matches: readonly FullEntry[]): Partial<Answer> {
  return matches.length > 0
    ? {}
    : { hint: 'No tool matched the query: try other words (a verb and an object, e.g. "take screenshot"), or open the toolbox without a query for its index.' };
}

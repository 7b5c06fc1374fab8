import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import type { ClientManager } from '../clients/client-manager.js';
import type { ToolboxConfig, WorkbenchConfig } from '../config/types.js';
import { WorkbenchError } from '../errors.js';
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
import { compileGlob } from '../catalog/glob.js';
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

export interface DiscoveryOptions {
  config: WorkbenchConfig;
  manager: ClientManager;
  policy: () => VisibilityPolicy;
  /** The catalog of live tools (what `use_tool` resolves against), with its entries in the same order. */
  liveCatalog: (toolbox: string) => { catalog: ToolboxCatalog; entries: readonly FullEntry[] };
  toEntry: (tool: CatalogTool) => FullEntry;
  /** Off when undefined (`--no-catalog-cache`). */
  cache?: CatalogCache;
  /** `--catalog-budget`: beats the config's top-level `catalogBudget`, not a toolbox's own. */
  budget?: number;
}

interface View {
  connected: string[];
  failed: { server: string; error: string }[];
  catalog: ToolboxCatalog;
  entries: readonly FullEntry[];
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
  toolsChanged(toolbox: string, server: string): void {
    const tools = this.options.manager.serverTools(toolbox).find((s) => s.server === server)?.tools;
    const config = this.toolbox(toolbox).servers.find((s) => s.name === server);
    if (!tools || !config || !this.options.cache) return;
    this.failing.delete(`${toolbox}/${server}`);
    this.seeds.set(`${toolbox}/${server}`, tools);
    void this.options.cache.write(toolbox, config, tools);
  }

  /** The budget of characters for an answer about this toolbox (or about all of them). */
  budget(toolbox?: string): number {
    const own = toolbox === undefined ? undefined : this.options.config.toolboxes.find((t) => t.name === toolbox)?.catalogBudget;
    return own ?? this.options.budget ?? this.options.config.catalogBudget ?? DEFAULT_CATALOG_BUDGET;
  }

  async open(request: OpenToolboxRequest): Promise<BudgetedAnswer> {
    const budget = request.detail === 'full' ? Infinity : this.budget(request.toolbox_name);
    const limit = request.limit ?? DEFAULT_SEARCH_LIMIT;
    if (request.toolbox_name === undefined) {
      // Search everywhere: cached catalogs where present, the rest connected now.
      const names = this.options.config.toolboxes.map((t) => t.name);
      const views = await Promise.all(names.map((name) => this.view(name)));
      const head: AnswerHead = {
        toolbox: '*',
        description: 'Search across every toolbox',
        servers_connected: views.flatMap((v, i) => v.connected.map((s) => `${names[i]}/${s}`)),
        servers_failed: views.flatMap((v, i) => v.failed.map((f) => ({ server: `${names[i]}/${f.server}`, error: f.error }))),
      };
      const matches = searchTools(views.map((v) => searchIndex(v.entries)), request.query ?? '', limit);
      return budgetMatches(head, matches, budget, noMatchHint(matches));
    }
    const toolbox = this.toolbox(request.toolbox_name);
    const view = await this.view(toolbox.name);
    const head: AnswerHead = {
      toolbox: toolbox.name,
      description: toolbox.description,
      servers_connected: view.connected,
      servers_failed: view.failed,
    };
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
    const picked = new Map<string, FullEntry>();
    const notFound: NonNullable<Answer['not_found']> = [];
    for (const name of names) {
      let found: CatalogTool[] = [];
      if (/[*?]/.test(name)) {
        const match = compileGlob(name);
        found = view.catalog.tools.filter((t) => match(t.name) || match(t.tool.name));
        if (found.length === 0) notFound.push({ name, suggestions: [] });
      } else {
        const lookup = view.catalog.find(name);
        if ('found' in lookup) found = [lookup.found];
        else if ('ambiguous' in lookup) found = lookup.ambiguous;
        // A disabled tool is not offered: it is reported like an unknown one, without suggestions.
        else notFound.push({ name, suggestions: 'notFound' in lookup ? lookup.suggestions : [] });
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
  private async view(name: string): Promise<View> {
    const { manager, cache } = this.options;
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
        return { connected: toolbox.servers.map((s) => s.name), failed: [], catalog, entries: catalog.tools.map(this.options.toEntry) };
      }
    }
    const opened = unconnected.length > 0 ? await manager.openToolbox(name) : { connected: toolbox.servers.map((s) => s.name), failed: [] };
    this.noteOpened(name, opened.failed);
    const { catalog, entries } = this.options.liveCatalog(name);
    return { connected: opened.connected, failed: opened.failed, catalog, entries };
  }

  private noteOpened(toolbox: string, failed: readonly { server: string }[]): void {
    for (const f of failed) this.failing.add(`${toolbox}/${f.server}`);
  }

  private async seed(toolbox: string, server: string): Promise<Tool[] | undefined> {
    const key = `${toolbox}/${server}`;
    if (!this.seeds.has(key)) {
      const config = this.toolbox(toolbox).servers.find((s) => s.name === server)!;
      this.seeds.set(key, (await this.options.cache!.read(toolbox, config)) ?? null);
    }
    return this.seeds.get(key) ?? undefined;
  }

  private toolbox(name: string): ToolboxConfig {
    const toolbox = this.options.config.toolboxes.find((t) => t.name === name);
    if (!toolbox) {
      const names = this.options.config.toolboxes.map((t) => t.name).join(', ') || '(none configured)';
      throw new WorkbenchError('TOOLBOX_NOT_FOUND', `Unknown toolbox "${name}". Available toolboxes: ${names}.`);
    }
    return toolbox;
  }
}

function noMatchHint(matches: readonly FullEntry[]): Partial<Answer> {
  return matches.length > 0
    ? {}
    : { hint: 'No tool matched the query: try other words (a verb and an object, e.g. "take screenshot"), or open the toolbox without a query for its index.' };
}

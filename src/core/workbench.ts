import { Ajv, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { CallToolResult, Tool } from '@modelcontextprotocol/sdk/types.js';
import { ClientManager, type CallOptions, type FailedServer } from '../clients/client-manager.js';
import { SharedServers } from '../clients/shared-servers.js';
import { OrphanReaper } from '../clients/orphan-reaper.js';
import { scopeRelay, sharedLogRouter, sharedRelay, type CallContext, type RoutingBooks, type UpstreamSession } from './session-routing.js';
import type { ServerConfig, ToolboxConfig, WorkbenchConfig } from '../config/types.js';
import { WorkbenchError, errorMessage, isWorkbenchError, type ServerFailure, type WorkbenchErrorCode } from '../errors.js';
import { quoteClientText } from '../shared/client-text.js';
import type { Logger } from '../log.js';
import { compileGlob } from '../shared/glob.js';
import { formatToolName, parseToolName, type ToolNameParts } from '../catalog/names.js';
import { ToolboxCatalog, type CatalogTool, type ToolLookup } from '../catalog/toolbox-catalog.js';
import { createVisibilityPolicy, type ToolState, type VisibilityPolicy } from '../catalog/visibility.js';
import { createOverrideResolver, overriddenText, type OverrideResolver } from '../catalog/overrides.js';
import { resolveToolsets, sessionToolsetFilter, type ResolvedToolset } from '../catalog/toolsets.js';
import { describeToolset, openToolset, routeToolsetCall, type ToolsetHost } from './toolset-routes.js';
import { toolStatuses } from './tool-status.js';
import type { CatalogCache } from '../catalog/catalog-cache.js';
import type { Answer, BudgetedAnswer } from '../catalog/catalog-index.js';
import { Discovery, type OpenToolboxRequest } from './open-toolbox.js';

// ajv-formats is CommonJS: under NodeNext the plugin function is its namespace's `default.default`.
const addFormats = addFormatsModule.default;

export interface WorkbenchOptions {
  config: WorkbenchConfig;
  env: Record<string, string | undefined>;
  log: Logger;
  version: string;
  /** `--disabled-tools` patterns. */
  cliDisabled?: readonly string[];
  /** Initial state-file lists, if any. */
  state?: ToolState;
  /** Largest single message accepted from a downstream server (default DEFAULT_MAX_MESSAGE_BYTES). */
  maxMessageBytes?: number;
  /** `--toolset`: limit every session to the tools of these toolsets. */
  sessionToolsets?: readonly string[];
  /** Where servers' last tool lists are kept; no cache when undefined. */
  catalogCache?: CatalogCache;
  /** `--catalog-budget` (characters). */
  catalogBudget?: number;
}

/** One tool as `open_toolbox` presents it. */
export interface ToolEntry {
  name: string;
  toolbox_name: string;
  source_server: string;
  original_name: string;
  title?: string;
  description: string;
  inputSchema: Tool['inputSchema'];
  outputSchema?: Tool['outputSchema'];
  annotations?: Tool['annotations'];
}

/** One tool as `list_all_tools` and `tools list` show it: enabled or not, and why. */
export interface ToolStatus {
  name: string;
  toolbox: string;
  server: string;
  original_name: string;
  enabled: boolean;
  /** Present when disabled: which source (config, project, cli, toolset, state), the rule that applied, and a sentence. */
  disabled_by?: { source: string; rule: string; reason: string };
  /** The server's own description, as it sent it. */
  description?: string;
  /** What open_toolbox shows instead, when toolOverrides apply. */
  override?: { title?: string; description: string; annotations?: Tool['annotations'] };
}

export interface ToolStatusReport {
  tools: ToolStatus[];
  /** Servers that could not be connected, so their tools could not be listed. */
  servers_failed: ({ toolbox: string } & FailedServer)[];
}

/** What `open_toolbox` answers when `detail` is `"full"` (README: "open_toolbox"); other answers are `Answer`s. */
export type OpenToolboxResult = Omit<Answer, 'tools'> & { tools: ToolEntry[] };

export type { CallContext, UpstreamSession } from './session-routing.js';

export interface UseToolOptions extends CallOptions {
  call?: CallContext;
  /** The session's downstream connections and catalogs (see {@link Workbench.openSession}); default: the workbench's own. */
  scope?: SessionScope;
}

/**
 * One client session's view of the workbench: its downstream connections (its own for every server unless `shared`)
 * and the catalogs built from them. Obtained from {@link Workbench.openSession}; `close()` ends its servers.
 */
export interface SessionScope {
  readonly manager: ClientManager;
  close(): Promise<void>;
}

/** One ClientManager with its routing books (see RoutingBooks) and the catalogs built from its servers. */
interface Scope extends SessionScope, RoutingBooks {
  readonly catalogs: Map<string, CachedCatalog>;
}

interface CachedCatalog {
  catalog: ToolboxCatalog;
  entries: ToolEntry[];
}

/**
 * The state shared by every client session: downstream connections, per-toolbox catalogs (rebuilt only when a
 * server's tools or the visibility inputs change), compiled argument validators, and the client sessions. The MCP-facing
 * layer (`createServer`) is a thin adapter over this.
 */
export class Workbench {
  /** The workbench's own connections: the one session over stdio, and the CLI's (tools, doctor). */
  readonly manager: ClientManager;
  private current: WorkbenchConfig;
  private toolboxes: Map<string, ToolboxConfig>;
  private toolsets: Map<string, ResolvedToolset>;
  private overrides: OverrideResolver;
  private state: ToolState | undefined;
  private readonly sessionToolsets: readonly string[] | undefined;
  private readonly catalogListeners = new Set<() => void>();
  private readonly log: Logger;
  private readonly cliDisabled: readonly string[];
  private readonly options: WorkbenchOptions;
  private policy: VisibilityPolicy;
  private readonly root: Scope;
  /** Every scope, the root's included: a change of tools or state reaches all their catalogs. */
  private readonly scopes = new Set<Scope>();
  /** Made on the first isolated session: the `shared: true` servers, and one orphan reaper for all sessions. */
  private pool: { shared: SharedServers; reaper: OrphanReaper; activity: Map<string, Set<CallContext>> } | undefined;
  /** `toolbox/server` of every `shared: true` server. */
  private sharedKeys: Set<string>;
  private readonly validators = new WeakMap<Tool, ValidateFunction | null>();
  private readonly outputValidators = new WeakMap<Tool, ValidateFunction | null>();
  private ajv: Ajv | undefined;
  private readonly discovery: Discovery;

  constructor(options: WorkbenchOptions) {
    this.options = options;
    this.current = options.config;
    this.log = options.log;
    this.cliDisabled = options.cliDisabled ?? [];
    this.state = options.state;
    this.sessionToolsets = options.sessionToolsets;
    this.toolboxes = new Map(options.config.toolboxes.map((t) => [t.name, t]));
    this.toolsets = resolveToolsets(options.config);
    this.overrides = createOverrideResolver(options.config);
    this.policy = this.createPolicy(options.config);
    this.sharedKeys = sharedKeysOf(options.config);
    this.discovery = new Discovery({
      config: () => this.current,
      policy: () => this.policy,
      toEntry: (t) => toEntry(t, this.overrides),
      cache: options.catalogCache,
      budget: options.catalogBudget,
    });
    this.root = this.createScope(undefined);
    this.manager = this.root.manager;
  }

  /**
   * Opens a client session. Not isolated (stdio: the only session), it uses the workbench's own connections.
   * Isolated (HTTP), it gets connections of its own for every server that is not `shared`, started on first use and
   * ended by `close()`; requests and log messages of those servers go to this session only.
   */
  openSession(upstream: UpstreamSession, options: { isolated: boolean }): SessionScope {
    if (!options.isolated) {
      this.root.upstream = upstream;
      return {
        manager: this.root.manager,
        close: async () => {
          if (this.root.upstream === upstream) this.root.upstream = undefined;
        },
      };
    }
    return this.createScope(upstream);
  }

  private createScope(upstream: UpstreamSession | undefined): Scope {
    const options = this.options;
    const pool = upstream ? this.sharedPool() : undefined;
    const books: Omit<Scope, 'manager' | 'close'> = { catalogs: new Map(), activity: new Map(), upstream };
    const manager = new ClientManager({
      config: this.current,
      env: options.env,
      log: options.log,
      clientInfo: { name: 'mcp-workbench', version: options.version },
      maxMessageBytes: options.maxMessageBytes,
      onToolsChanged: (toolbox, server) => {
        books.catalogs.delete(toolbox);
        this.discovery.toolsChanged(manager, toolbox, server);
      },
      onLogMessage: (toolbox, server, params) => {
        const logger = params.logger ? `${toolbox}/${server}/${params.logger}` : `${toolbox}/${server}`;
        books.upstream?.log({ ...params, logger });
      },
      upstream: scopeRelay(books),
      ...(pool ? { shared: pool.shared, groups: pool.reaper } : {}),
    });
    const scope: Scope = Object.assign(books, {
      manager,
      close: async (): Promise<void> => {
        this.scopes.delete(scope);
        books.upstream = undefined;
        await manager.close();
      },
    });
    this.scopes.add(scope);
    return scope;
  }

  /** The `shared: true` servers of isolated sessions, made once. */
  private sharedPool(): NonNullable<Workbench['pool']> {
    if (this.pool) return this.pool;
    const options = this.options;
    const reaper = new OrphanReaper(options.log);
    const activity = new Map<string, Set<CallContext>>();
    const shared = new SharedServers({
      config: this.current,
      env: options.env,
      log: options.log,
      clientInfo: { name: 'mcp-workbench', version: options.version },
      maxMessageBytes: options.maxMessageBytes,
      groups: reaper,
      onToolsChanged: (toolbox) => {
        for (const scope of this.scopes) scope.catalogs.delete(toolbox);
      },
      onLogMessage: sharedLogRouter(activity, this.log),
      upstream: sharedRelay(activity, () => [...this.scopes].flatMap((s) => (s.upstream ? [s.upstream.capabilities() ?? {}] : [])), this.log),
    });
    return (this.pool = { shared, reaper, activity });
  }

  /**
   * Runs a forwarded call while recording it as in flight on its server (in the books of whoever routes that server's
   * requests: the scope, or the shared pool). Returns the call's own promise (the bookkeeping hangs off it), so the
   * hot path gains no promise turn.
   */
  private tracked<T>(scope: Scope, toolbox: string, server: string, call: CallContext | undefined, run: () => Promise<T>): Promise<T> {
    if (!call) return run();
    const key = `${toolbox}/${server}`;
    const books = scope !== this.root && this.pool && this.sharedKeys.has(key) ? this.pool.activity : scope.activity;
    let calls = books.get(key);
    if (!calls) books.set(key, (calls = new Set()));
    const inFlight = calls;
    inFlight.add(call);
    const done = (): void => void inFlight.delete(call);
    let promise: Promise<T>;
    try {
      promise = run();
    } catch (error) {
      done();
      return Promise.reject(error);
    }
    promise.then(done, done);
    return promise;
  }

  /** The config in effect (it changes on {@link reload}). */
  get config(): WorkbenchConfig {
    return this.current;
  }

  /** Replace the state-file lists; catalogs are re-derived lazily on next use. */
  setState(state: ToolState | undefined): void {
    this.state = state;
    this.policy = this.createPolicy(this.current);
    for (const scope of this.scopes) scope.catalogs.clear();
  }

  /**
   * Switches to a new config without a restart: new toolboxes and toolsets are usable at once, removed ones close
   * their servers after their calls in flight, a server whose launch settings changed restarts on next use, and
   * descriptions and overrides apply to the next open_toolbox. Listeners (the client sessions) are told so they can
   * send `notifications/tools/list_changed`.
   *
   * @throws WorkbenchError `CONFIG_INVALID` when the config no longer defines a toolset this session is limited to
   *   (`--toolset`); nothing changes then.
   */
  reload(config: WorkbenchConfig): { replaced: string[]; removed: string[] } {
    const policy = this.createPolicy(config);
    this.current = config;
    this.toolboxes = new Map(config.toolboxes.map((t) => [t.name, t]));
    this.toolsets = resolveToolsets(config);
    this.overrides = createOverrideResolver(config);
    this.policy = policy;
    this.sharedKeys = sharedKeysOf(config);
    this.pool?.shared.reload(config);
    let outcome = { replaced: [] as string[], removed: [] as string[] };
    for (const scope of this.scopes) {
      scope.catalogs.clear();
      const changed = scope.manager.reload(config);
      if (scope === this.root) outcome = changed;
    }
    for (const listener of this.catalogListeners) {
      try {
        listener();
      } catch (error) {
        this.log.warn(`a session could not be told about the config change: ${errorMessage(error)}`);
      }
    }
    return outcome;
  }

  /** Called after every {@link reload}; returns an unsubscribe function. */
  onCatalogChanged(listener: () => void): () => void {
    this.catalogListeners.add(listener);
    return () => void this.catalogListeners.delete(listener);
  }

  toolboxConfigs(): ToolboxConfig[] {
    return this.current.toolboxes;
  }

  /** Every name open_toolbox and use_tool accept as `toolbox_name`: toolboxes, then toolsets. */
  catalogNames(): string[] {
    return [...this.current.toolboxes.map((t) => t.name), ...(this.current.toolsets ?? []).map((t) => t.name)];
  }

  /**
   * What a toolset resolves to (for `tools list --toolset`): connects the servers it needs and returns each tool it
   * holds with its status, plus the patterns that matched no tool at all.
   */
  async describeToolset(name: string): Promise<ToolStatusReport & { unmatched: string[] }> {
    const toolset = this.toolsets.get(name);
    if (!toolset) {
      throw new WorkbenchError('TOOLBOX_NOT_FOUND', `Unknown toolset "${name}". Toolsets: ${(this.current.toolsets ?? []).map((t) => t.name).join(', ') || '(none configured)'}.`);
    }
    return describeToolset(this.toolsetHost(this.root), toolset, (toolbox) => this.statusOf(this.root, toolbox));
  }

  private createPolicy(config: WorkbenchConfig): VisibilityPolicy {
    const sessionToolsets = this.sessionToolsets && sessionToolsetFilter(config, this.sessionToolsets);
    return createVisibilityPolicy({ config, cliDisabled: this.cliDisabled, state: this.state, sessionToolsets });
  }

  private toolsetHost(scope: Scope): ToolsetHost<ToolEntry> {
    return {
      connect: (toolbox, server) => scope.manager.connectServer(toolbox, server),
      catalog: (toolbox) => this.cachedCatalog(scope, toolbox),
    };
  }

  /** Human- and model-readable guidance for the `initialize` result. */
  instructions(): string {
    const lines = [
      `MCP Workbench gives access to ${this.config.toolboxes.length} toolbox(es) of MCP tools through two tools:`,
      `1. open_toolbox {toolbox_name}: connects the toolbox's servers and returns its tools with their full input schemas, or, when they exceed ${this.discovery.budget()} characters, a compact index of every tool. Pass tools:[names] for the schemas of just those, or query:"words" (with or without toolbox_name) to search for the best matches.`,
      `2. use_tool {toolbox_name, tool_name, arguments}: calls one of those tools. Use the tool name exactly as open_toolbox returned it ({toolbox}__{server}__{tool}) and arguments that match its inputSchema.`,
      `Open a toolbox before using its tools. Toolboxes:`,
    ];
    for (const t of this.config.toolboxes) {
      const servers = `${t.servers.length} server${t.servers.length === 1 ? '' : 's'}`;
      lines.push(`- ${t.name} (${servers})${t.description ? `: ${t.description}` : ''}`);
    }
    if ((this.config.toolsets ?? []).length > 0) {
      lines.push(`Toolsets (named sets of tools across toolboxes; use a toolset name as toolbox_name in open_toolbox and use_tool):`);
      for (const t of this.config.toolsets ?? []) lines.push(`- ${t.name} (toolset)${t.description ? `: ${t.description}` : ''}`);
    }
    if (this.sessionToolsets) lines.push(`This session is limited to the tools of toolset(s): ${this.sessionToolsets.join(', ')}.`);
    lines.push(`The list of toolboxes and toolsets can change while you work (the config is followed live); the toolbox_name parameter of open_toolbox always lists the current names.`);
    return lines.join('\n');
  }

  /**
   * `open_toolbox`: the catalog under the context budget (a compact index when the full one does not fit), full
   * entries for named tools, or search results — for a toolbox, a toolset (its tools across toolboxes, connecting only
   * the servers it needs), or every toolbox (a search without `toolbox_name`). Throws TOOLBOX_NOT_FOUND for an unknown
   * name.
   */
  async openToolbox(request: OpenToolboxRequest, session?: SessionScope): Promise<BudgetedAnswer> {
    const scope = this.scopeOf(session);
    const name = request.toolbox_name;
    const toolset = name === undefined || this.toolboxes.has(name) ? undefined : this.toolsets.get(name);
    if (toolset) {
      const opened = await openToolset(this.toolsetHost(scope), toolset);
      const toolboxes = [...new Set(toolset.servers.map((s) => s.toolbox))];
      return this.discovery.answer(
        request,
        { toolbox: toolset.config.name, description: toolset.config.description },
        {
          connected: opened.connected,
          failed: opened.failed,
          catalogs: toolboxes.map((t) => this.cachedCatalog(scope, t).catalog),
          entries: opened.tools,
          member: (tool) => toolset.includes(tool),
        },
        this.discovery.budget(),
      );
    }
    return this.discovery.open(request, this.discoveryScope(scope));
  }

  private discoveryScope(scope: Scope): { manager: ClientManager; liveCatalog: (toolbox: string) => CachedCatalog } {
    return { manager: scope.manager, liveCatalog: (toolbox) => this.cachedCatalog(scope, toolbox) };
  }

  /**
   * `use_tool`: resolves the name, refuses disabled tools before connecting anything, validates arguments against
   * the tool's inputSchema, forwards the call and returns the downstream result as it came. Every failure about
   * toolboxes and downstream tools comes back as an `isError` result that says what to do next.
   */
  useTool(toolboxName: string, toolName: string, args: Record<string, unknown> | undefined, options: UseToolOptions = {}): Promise<CallToolResult> {
    try {
      return this.useToolNow(toolboxName, toolName, args, options);
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /**
   * The hot path (a known tool on a connected server) runs without an async frame of its own: the call's promise is
   * the one returned. Anything that needs a connect first goes through {@link connectThenUse}.
   */
  private useToolNow(toolboxName: string, toolName: string, args: Record<string, unknown> | undefined, options: UseToolOptions): Promise<CallToolResult> {
    const scope = this.scopeOf(options.scope);
    const manager = scope.manager;
    const toolbox = this.toolboxes.get(toolboxName);
    if (!toolbox) {
      const toolset = this.toolsets.get(toolboxName);
      if (toolset) return this.useToolsetTool(toolset, toolName, args, options);
      return Promise.resolve(errorResult(
        `Unknown toolbox ${quoteClientText(toolboxName)}. Available toolboxes: ${this.toolboxNames()}. Call open_toolbox with one of them to see its tools.`,
        'TOOLBOX_NOT_FOUND',
      ));
    }
    const parts = parseToolName(toolName);
    if (parts && parts.toolbox !== toolboxName && this.toolboxes.has(parts.toolbox)) {
      return Promise.resolve(errorResult(
        `Tool ${quoteClientText(toolName)} belongs to toolbox "${parts.toolbox}", not "${toolboxName}". Call use_tool with toolbox_name "${parts.toolbox}".`,
        'TOOL_NOT_FOUND',
      ));
    }
    const knownServer = parts && parts.toolbox === toolboxName ? toolbox.servers.find((s) => s.name === parts.server) : undefined;
    const lookup = this.cachedCatalog(scope, toolboxName).catalog.find(toolName);
    // A bare or loose name is unique only if it is unique across the whole toolbox, not just the servers up so far.
    const wholeToolboxNeeded = !knownServer && toolbox.servers.some((s) => !manager.isConnected(toolboxName, s.name));
    if ('found' in lookup && !wholeToolboxNeeded) return this.forward(scope, toolbox, lookup.found, args, options);
    return this.connectThenUse(scope, toolbox, toolName, parts, knownServer, lookup, wholeToolboxNeeded, args, options);
  }

  /** `use_tool` with a toolset name: the tool is routed to the toolbox that owns it, under its canonical name. */
  private async useToolsetTool(toolset: ResolvedToolset, toolName: string, args: Record<string, unknown> | undefined, options: UseToolOptions): Promise<CallToolResult> {
    const route = await routeToolsetCall(this.toolsetHost(this.scopeOf(options.scope)), toolset, toolName, new Set(this.toolboxes.keys()));
    if ('error' in route) return errorResult(route.error, route.code);
    return this.useToolNow(route.toolbox, route.toolName, args, options);
  }

  /** `use_tool` for a name the catalog cannot answer yet: connects what the name needs, then resolves it again. */
  private async connectThenUse(
    scope: Scope,
    toolbox: ToolboxConfig,
    toolName: string,
    parts: ToolNameParts | undefined,
    knownServer: ServerConfig | undefined,
    lookup: ToolLookup,
    wholeToolboxNeeded: boolean,
    args: Record<string, unknown> | undefined,
    options: UseToolOptions,
  ): Promise<CallToolResult> {
    const toolboxName = toolbox.name;
    if (parts && knownServer && !('found' in lookup)) {
      // Not in the catalog of enabled tools (which the policy built): decide from the name alone, before anything is
      // connected or counted for a disabled tool.
      const visibility = this.policy.check(toolboxName, parts.server, parts.tool);
      if (!visibility.enabled) return errorResult(disabledMessage(toolName, visibility.reason, visibility.source), 'TOOL_DISABLED');
    }
    if (!('found' in lookup) || wholeToolboxNeeded) {
      // Not known yet: connect what the name needs (just its server for a canonical name, else the whole toolbox).
      if (knownServer && !scope.manager.isConnected(toolboxName, knownServer.name)) {
        const failure = await scope.manager.connectServer(toolboxName, knownServer.name);
        if (failure) return errorResult(`Cannot call ${quoteClientText(toolName)}: ${failure.toDisplayString()}`, failure.code, failure.failure);
      } else if (!knownServer) {
        await scope.manager.openToolbox(toolboxName);
      }
      lookup = this.cachedCatalog(scope, toolboxName).catalog.find(toolName);
    }
    if ('hidden' in lookup) {
      return errorResult(disabledMessage(lookup.hidden.name, lookup.hidden.visibility.reason, lookup.hidden.visibility.source), 'TOOL_DISABLED');
    }
    if ('ambiguous' in lookup) {
      return errorResult(
        `Tool name ${quoteClientText(toolName)} is ambiguous in toolbox "${toolboxName}": it matches ${lookup.ambiguous.map((t) => t.name).join(', ')}. Use the full name.`,
        'TOOL_NOT_FOUND',
      );
    }
    if ('notFound' in lookup && parts?.toolbox === toolboxName && !knownServer) {
      return errorResult(
        `Tool ${quoteClientText(toolName)} names server "${parts.server}", which toolbox "${toolboxName}" does not have. Its servers: ${toolbox.servers.map((s) => s.name).join(', ')}. Call open_toolbox {"toolbox_name":"${toolboxName}"} to list the valid names.`,
        'TOOL_NOT_FOUND',
      );
    }
    if ('notFound' in lookup) {
      const failed = toolbox.servers.filter((s) => !scope.manager.isConnected(toolboxName, s.name)).map((s) => s.name);
      const hint = lookup.suggestions.length > 0 ? ` Closest names: ${lookup.suggestions.join(', ')}.` : '';
      const down = failed.length > 0 ? ` Not connected (their tools are unavailable): ${failed.join(', ')}.` : '';
      return errorResult(
        `Unknown tool ${quoteClientText(toolName)} in toolbox "${toolboxName}".${hint}${down} Call open_toolbox {"toolbox_name":"${toolboxName}"} to list the valid names.`,
        'TOOL_NOT_FOUND',
      );
    }
    return this.forward(scope, toolbox, lookup.found, args, options);
  }

  /** Validates the arguments, forwards the call, and checks what came back. */
  private forward(scope: Scope, toolbox: ToolboxConfig, entry: CatalogTool, args: Record<string, unknown> | undefined, options: UseToolOptions): Promise<CallToolResult> {
    const toolboxName = toolbox.name;
    const validate = this.inputValidator(entry.tool);
    const input = args ?? {};
    if (validate && !validate(input)) {
      const problems = (validate.errors ?? []).map((e) => `${e.instancePath || '(arguments)'} ${e.message ?? 'is invalid'}${describeParams(e.params)}`);
      return Promise.resolve(errorResult(
        `Invalid arguments for "${entry.name}" (server "${entry.server}", tool "${entry.tool.name}"):\n${problems.map((p) => `- ${p}`).join('\n')}\nFix the arguments to match the tool's inputSchema: ${JSON.stringify(entry.tool.inputSchema)}`,
        'INVALID_ARGUMENTS',
      ));
    }

    return this.tracked(scope, toolboxName, entry.server, options.call, () =>
      scope.manager.callTool(toolboxName, entry.server, entry.tool.name, args, options),
    ).then(
      (result) => this.checkOutput(entry, result),
      (error: unknown) => {
        if (isWorkbenchError(error)) return errorResult(`${entry.name}: ${error.toDisplayString()}`, error.code, error.failure);
        throw error;
      },
    );
  }

  /**
   * Every tool of the given toolbox (or of all toolboxes), enabled or not, with the source that disabled it.
   * Connects what it must; servers that fail are reported, not thrown.
   */
  async listAllTools(toolbox?: string, session?: SessionScope): Promise<ToolStatusReport> {
    const scope = this.scopeOf(session);
    const names = toolbox === undefined ? this.config.toolboxes.map((t) => t.name) : [this.requireToolbox(toolbox).name];
    const opened = await Promise.all(names.map(async (name) => ({ name, result: await scope.manager.openToolbox(name) })));
    const report: ToolStatusReport = { tools: [], servers_failed: [] };
    for (const { name, result } of opened) {
      for (const failure of result.failed) report.servers_failed.push({ toolbox: name, ...failure });
      report.tools.push(...this.statusOf(scope, name));
    }
    report.tools.sort((a, b) => a.name.localeCompare(b.name));
    return report;
  }

  private statusOf(scope: Scope, toolbox: string): ToolStatus[] {
    return toolStatuses(this.cachedCatalog(scope, toolbox).catalog, this.overrides);
  }

  /**
   * Whether a canonical name or glob refers to something that exists as far as the workbench knows: the toolbox and
   * server are configured, and — when that server's catalog is loaded — the tool exists (a glob must match one).
   */
  isKnownName(name: string): boolean {
    if (/[*?]/.test(name)) {
      const match = compileGlob(name);
      const loaded = this.config.toolboxes.flatMap((t) =>
        this.manager.serverTools(t.name).flatMap(({ server, tools }) => tools.map((tool) => formatToolName(t.name, server, tool.name))),
      );
      // Nothing loaded yet: a glob cannot be checked, so it is not reported as unknown.
      return loaded.length === 0 || loaded.some(match);
    }
    const parts = parseToolName(name);
    const server = parts && this.toolboxes.get(parts.toolbox)?.servers.find((s) => s.name === parts.server);
    if (!parts || !server) return false;
    const tools = this.manager.serverTools(parts.toolbox).find((s) => s.server === parts.server)?.tools;
    return tools === undefined || tools.some((t) => t.name === parts.tool);
  }

  async close(): Promise<void> {
    const scopes = [...this.scopes];
    await Promise.allSettled([...scopes.map((s) => s.close()), this.pool?.shared.close()]);
    this.pool?.reaper.close();
    await this.options.catalogCache?.flush();
  }

  private checkOutput(entry: CatalogTool, raw: CallToolResult): CallToolResult {
    // The result arrives unparsed (see CallChannel): check the one thing every client relies on. A missing content
    // list is what older servers send with structuredContent; clients read it as empty, and so do we.
    if (raw.content !== undefined && !Array.isArray(raw.content)) {
      return errorResult(
        `${entry.name}: the server's result has a "content" that is not a list, so no client can read it. Report this to the server's maintainers.`,
        'INVALID_OUTPUT',
      );
    }
    const result = raw.content === undefined ? { ...raw, content: [] } : raw;
    if (result.isError || !entry.tool.outputSchema) return result;
    if (result.structuredContent === undefined) {
      return errorResult(
        `${entry.name}: the server declared an outputSchema for "${entry.tool.name}" but returned no structuredContent. The tool's result cannot be trusted; report this to the server's maintainers.`,
        'INVALID_OUTPUT',
      );
    }
    const validate = this.outputValidator(entry.tool);
    if (validate && !validate(result.structuredContent)) {
      const problems = (validate.errors ?? []).map((e) => `${e.instancePath || '(root)'} ${e.message ?? 'is invalid'}`).join('; ');
      return {
        ...result,
        isError: true,
        content: [
          { type: 'text', text: `${entry.name}: the server's structuredContent does not match its own outputSchema (${problems}).` },
          ...result.content,
        ],
        _meta: { ...result._meta, [ERROR_META_KEY]: { code: 'INVALID_OUTPUT' } },
      };
    }
    return result;
  }

  private cachedCatalog(scope: Scope, toolbox: string): CachedCatalog {
    let cached = scope.catalogs.get(toolbox);
    if (!cached) {
      const catalog = new ToolboxCatalog(toolbox, scope.manager.serverTools(toolbox), this.policy);
      const entries = catalog.tools.map((t) => toEntry(t, this.overrides));
      cached = { catalog, entries };
      scope.catalogs.set(toolbox, cached);
    }
    return cached;
  }

  /** The scope of a session (the workbench's own for none, or for a session that is not isolated). */
  private scopeOf(session: SessionScope | undefined): Scope {
    return session !== undefined && this.scopes.has(session as Scope) ? (session as Scope) : this.root;
  }

  private inputValidator(tool: Tool): ValidateFunction | null {
    return this.compileCached(this.validators, tool, tool.inputSchema);
  }

  private outputValidator(tool: Tool): ValidateFunction | null {
    return this.compileCached(this.outputValidators, tool, tool.outputSchema);
  }

  /** Compiled once per tool object; a schema ajv cannot compile is not enforced here (the server still validates). */
  private compileCached(cache: WeakMap<Tool, ValidateFunction | null>, tool: Tool, schema: object | undefined): ValidateFunction | null {
    if (cache.has(tool)) return cache.get(tool)!;
    let validate: ValidateFunction | null = null;
    if (schema) {
      try {
        this.ajv ??= createAjv();
        const { $schema: _ignored, ...rest } = schema as Record<string, unknown>;
        validate = this.ajv.compile(rest);
      } catch (error) {
        this.log.debug(`schema of tool "${tool.name}" not compiled, arguments forwarded unchecked: ${errorMessage(error)}`);
      }
    }
    cache.set(tool, validate);
    return validate;
  }

  private requireToolbox(name: string): ToolboxConfig {
    const toolbox = this.toolboxes.get(name);
    if (!toolbox) {
      throw new WorkbenchError('TOOLBOX_NOT_FOUND', `Unknown toolbox ${quoteClientText(name)}. Available toolboxes: ${this.toolboxNames()}.`);
    }
    return toolbox;
  }

  private toolboxNames(): string {
    return this.catalogNames().join(', ') || '(none configured)';
  }
}

/** `toolbox/server` of every `shared: true` server. */
function sharedKeysOf(config: WorkbenchConfig): Set<string> {
  return new Set(config.toolboxes.flatMap((t) => t.servers.filter((s) => s.shared).map((s) => `${t.name}/${s.name}`)));
}

function createAjv(): Ajv {
  const ajv = new Ajv({ allErrors: true, strict: false, validateSchema: false, addUsedSchema: false });
  addFormats(ajv);
  return ajv;
}

function toEntry(t: CatalogTool, overrides: OverrideResolver): ToolEntry {
  const { title, description, annotations } = overriddenText(t.tool, overrides(t.toolbox, t.server, t.tool.name));
  return {
    name: t.name,
    toolbox_name: t.toolbox,
    source_server: t.server,
    original_name: t.tool.name,
    ...(title !== undefined ? { title } : {}),
    description: `[${t.toolbox}/${t.server}] ${description}`.trimEnd(),
    inputSchema: t.tool.inputSchema,
    ...(t.tool.outputSchema !== undefined ? { outputSchema: t.tool.outputSchema } : {}),
    ...(annotations !== undefined ? { annotations } : {}),
  };
}

/** `_meta` key marking results the workbench produced itself (as opposed to a downstream tool's own error). */
export const ERROR_META_KEY = 'mcp-workbench/error';

/**
 * A failure of a proxied call as the client sees it: an `isError` result whose `_meta["mcp-workbench/error"]` carries
 * the code and, for a server that failed, what happened to it as fields (kind, exit code, signal, HTTP status…).
 */
export function errorResult(text: string, code: WorkbenchErrorCode, failure?: ServerFailure): CallToolResult {
  return { isError: true, content: [{ type: 'text', text }], _meta: { [ERROR_META_KEY]: failure ? { code, failure } : { code } } };
}

function disabledMessage(name: string, reason: string, source: string): string {
  const how =
    source === 'state'
      ? `Enable it with \`mcp-workbench tools enable ${name}\` (or enable_tools).`
      : source === 'cli'
        ? 'Remove it from the --disabled-tools option of the workbench to enable it.'
        : source === 'project'
          ? 'The project file (.mcp-workbench.json) hides it for this project; change that file to enable it.'
          : source === 'toolset'
            ? 'This session is limited by --toolset; use a tool of those toolsets, or start the workbench without --toolset.'
            : 'Change the workbench config to enable it.';
  return `Tool "${name}" is disabled: ${reason} (source: ${source}). ${how}`;
}

function describeParams(params: Record<string, unknown> | undefined): string {
  if (!params) return '';
  if (typeof params.additionalProperty === 'string') return ` ("${params.additionalProperty}")`;
  if (Array.isArray(params.allowedValues)) return ` (${params.allowedValues.map((v) => JSON.stringify(v)).join(', ')})`;
  return '';
}

import type { CallToolResult } from '@modelcontextprotocol/client';
import type { CatalogCache } from '../catalog/catalog-cache.js';
import type { BudgetedAnswer } from '../catalog/catalog-index.js';
import { createOverrideResolver, type OverrideResolver } from '../catalog/overrides.js';
import { ToolboxCatalog } from '../catalog/toolbox-catalog.js';
import { resolveToolsets, type ResolvedToolset } from '../catalog/toolsets.js';
import type { ToolState } from '../catalog/visibility.js';
import type { ClientManager } from '../clients/client-manager.js';
import type { ConnectTally } from '../clients/connect-warnings.js';
import type { StartSteps } from '../clients/start-steps.js';
import type { ToolboxConfig, WorkbenchConfig } from '../config/types.js';
import { WorkbenchError, errorMessage } from '../errors.js';
import type { Logger } from '../log.js';
import type { OAuthContext } from '../oauth/sign-in.js';
import { workbenchInstructions } from './instructions.js';
import { isKnownToolName } from './known-name.js';
import { Discovery, type OpenOptions, type OpenToolboxRequest } from './open-toolbox.js';
import { revalidatePrompts } from './cached-prompts.js';
import { serverChanged } from './feature-books.js';
import type { FeatureScope } from './feature-scope.js';
import { ToolPins } from './tool-pins.js';
import type { PinsRead, ValidPins } from '../state/pins.js';
import type { CachedCatalog, Scope, SessionScope, UseToolOptions } from './scope.js';
import { Scopes } from './scopes.js';
import type { UpstreamSession } from './session-routing.js';
import { toEntry, type ToolEntry, type ToolStatus, type ToolStatusReport } from './tool-entry.js';
import { toolStatuses } from './tool-status.js';
import { ToolStateModel } from './tool-state-model.js';
import type { ToolsetHost } from './toolset-routes.js';
import { openRequest, type OpenHost } from './open-request.js';
import { MODEL_STEPS, type NextSteps } from './next-steps.js';
import { describeNamedToolset, listToolStatuses, serverListings, type ReportSource, type ServerListings } from './tool-reports.js';
import { useTool, useToolWaitMs, type UseToolHost } from './use-tool.js';
import { calledTool, observed, outcomeOf, type WorkbenchObserver } from './call-events.js';
import { ToolValidators } from './validators.js';
export type { CallContext, UpstreamSession } from './session-routing.js';

export interface WorkbenchOptions {
  config: WorkbenchConfig;
  env: Record<string, string | undefined>;
  log: Logger;
  version: string;
  /** `--disabled-tools` patterns. */
  cliDisabled?: readonly string[];
  /** Initial state-file lists, if any. */
  state?: ToolState;
  /** The state file could not be trusted at start (see {@link Workbench.setStateProblem}); `state` is then unset. */
  stateProblem?: WorkbenchError;
  /** Largest single message accepted from a downstream server (default DEFAULT_MAX_MESSAGE_BYTES). */
  maxMessageBytes?: number;
  /** The window of a stdio server's stdout noise in the log (default a minute; see ChildProcessTransport). */
  noiseWindowMs?: number;
  /** `--toolset`: limit every session to the tools of these toolsets. */
  sessionToolsets?: readonly string[];
  /** Where servers' last tool lists are kept; no cache when undefined. */
  catalogCache?: CatalogCache;
  /** `--catalog-budget` (characters). */
  catalogBudget?: number;
  /** OAuth sign-ins of remote servers (README "Remote servers behind OAuth"); none without it. */
  oauth?: OAuthContext;
  /** What a server that cannot start tells its reader to do next: the model's words without it (a CLI's: its commands). */
  startSteps?: StartSteps;
  /** Where `${user:dir}` folders are made (README "Files of each user"): `users` beside the state file. */
  usersDir: string;
  /** The tool pins file and its content at start (README "Pinned tool definitions"); no checks without it. */
  pins?: { path: string; read: PinsRead; record: boolean; ownWrite?: () => (saved: ValidPins | undefined) => void };
  /**
   * Told of every use_tool call and open_toolbox when it ends (debug log, audit log); never of values. Unset, the
   * call path does no extra work.
   */
  observer?: WorkbenchObserver;
}

/**
 * The state shared by every client session: the visibility policy, per-toolbox catalogs (rebuilt only when a server's
 * tools or the visibility inputs change), compiled argument validators, discovery (open_toolbox), and the sessions'
 * downstream connections (`Scopes`, in scopes.ts: the root scope serves stdio and the CLI). The MCP-facing layer
 * (`createSurface`, server/create-server.ts) turns requests of either protocol era into calls of this class.
 */
export class Workbench {
  private current: WorkbenchConfig;
  private toolboxes: Map<string, ToolboxConfig>;
  private toolsets: Map<string, ResolvedToolset>;
  private overrides: OverrideResolver;
  /** Which tools are enabled, from every source, and whether the state file can be trusted now. */
  private readonly toolState: ToolStateModel;
  private readonly catalogListeners = new Set<() => void>();
  private readonly log: Logger;
  private readonly options: WorkbenchOptions;
  /** Every session's downstream connections (the root scope serves stdio and the CLI). */
  private readonly scopes: Scopes;
  private readonly validators: ToolValidators;
  readonly useToolHost: UseToolHost;
  private readonly discovery: Discovery;
  /** What open_toolbox answers from (open-request.ts). */
  private readonly openHost: OpenHost;
  private readonly pins: ToolPins | undefined;
  private configProblem: WorkbenchError | undefined;
  constructor(options: WorkbenchOptions) {
    this.options = options;
    this.current = options.config;
    this.log = options.log;
    this.validators = new ToolValidators(options.log);
    this.pins = options.pins && this.toolPins(options.pins);
    this.useToolHost = {
      scopeOf: (session) => this.scopes.of(session),
      toolboxes: () => this.toolboxes,
      toolsets: () => this.toolsets,
      policy: () => this.toolState.policy,
      toolboxNames: () => this.toolboxNames(),
      cachedCatalog: (scope, toolbox) => this.cachedCatalog(scope, toolbox),
      openWait: (toolbox) => this.discovery.openWait(toolbox),
      lastKnownTools: (scope, toolbox, server) => this.discovery.lastKnown(scope.manager, toolbox, server),
      useToolWait: (toolbox) => useToolWaitMs(this.current, toolbox),
      toolsetHost: (scope) => this.toolsetHost(scope),
      tracked: (scope, toolbox, server, call, run) => this.scopes.tracked(scope, toolbox, server, call, run),
      validators: this.validators,
      stateProblem: () => this.toolState.stateProblem,
    };
    this.toolboxes = new Map(options.config.toolboxes.map((t) => [t.name, t]));
    this.toolsets = resolveToolsets(options.config);
    this.overrides = createOverrideResolver(options.config);
    this.toolState = new ToolStateModel(options.config, options.cliDisabled ?? [], options.sessionToolsets, options.state, options.stateProblem);
    this.discovery = new Discovery({
      config: () => this.current,
      policy: () => this.toolState.policy,
      trust: (users) => this.pins?.policy(this.current, users),
      toEntry: (t) => toEntry(t, this.overrides),
      cache: options.catalogCache,
      budget: options.catalogBudget,
      log: options.log,
    });
    this.openHost = {
      discovery: this.discovery,
      brokenState: () => this.brokenState(),
      configProblem: () => this.configProblem,
      isToolbox: (name) => this.toolboxes.has(name),
      toolset: (name) => this.toolsets.get(name),
      toolsetHost: (scope) => this.toolsetHost(scope),
      cachedCatalog: (scope, toolbox) => this.cachedCatalog(scope, toolbox),
    };
    this.scopes = new Scopes({
      ...{ config: options.config, env: options.env, log: options.log, version: options.version, maxMessageBytes: options.maxMessageBytes },
      noiseWindowMs: options.noiseWindowMs,
      ...{ catalogCache: options.catalogCache, usersDir: options.usersDir },
      ...(options.oauth && { oauth: options.oauth }),
      ...(options.startSteps && { startSteps: options.startSteps }),
      onToolsChanged: (scope, toolbox, server, keep) => {
        scope.catalogs.delete(toolbox);
        this.observePins(scope.manager, toolbox, server);
        this.discovery.toolsChanged(scope.manager, toolbox, server, scope.shown, keep);
        const connected = scope.manager.isConnected(toolbox, server);
        // A server that just connected: its prompts are kept in the catalog cache too (README "Resources, prompts and completions").
        if (serverChanged(scope, toolbox, server, connected) && connected && options.catalogCache) {
          void revalidatePrompts(this.scopes.featureScope(scope), { toolbox, server }, this.log);
        }
      },
    });
  }

  /** Opens a client session: see {@link Scopes.open}. */
  openSession(upstream: UpstreamSession, options: { isolated: boolean; principal?: string }): SessionScope {
    return this.scopes.open(upstream, options);
  }

  /** What resource, prompt and completion requests of a session work with (the workbench's own for none). */
  featureScope(session?: SessionScope): FeatureScope {
    return this.scopes.featureScope(this.scopes.of(session));
  }

  /** The config in effect (it changes on {@link reload}). */
  get config(): WorkbenchConfig {
    return this.current;
  }

  /** A server's live tools, seen by the pins (first sight recorded, unapproved changes logged once). */
  private observePins(manager: ClientManager, toolbox: string, server: string): void {
    if (!this.pins) return;
    const listed = manager.serverTools(toolbox).find((s) => s.server === server);
    if (listed) this.pins.observe(this.current, manager, toolbox, server, listed.tools);
  }

  /** The tool pins file changed (an approval, an edit): catalogs are re-derived lazily on next use. */
  setPins(read: PinsRead): void {
    if (!this.pins) return;
    this.pins.set(read);
  }

  /** The pins of `pins`: catalogs are re-derived whenever the pins in effect change, own writes told to the watcher. */
  private toolPins({ path, read, record, ownWrite }: NonNullable<WorkbenchOptions['pins']>): ToolPins {
    return new ToolPins(path, read, this.log, record, { changed: () => this.clearCatalogs(), ...(ownWrite && { ownWrite }) });
  }

  /** Catalogs are derived from the pins and state in effect: re-derived lazily on next use once they change. */
  private clearCatalogs(): void {
    for (const scope of this.scopes) scope.catalogs.clear();
  }

  /** Replace the state-file lists; catalogs are re-derived lazily on next use. */
  setState(state: ToolState | undefined): void {
    this.toolState.setState(state, this.current);
    for (const scope of this.scopes) scope.catalogs.clear();
  }

  /**
   * Marks the state file as broken (it does not parse or cannot be read) or, with `undefined`, as good again. While
   * broken, use_tool refuses every call with `problem` before anything connects, and open_toolbox answers from the
   * last good state read in this run (with a note), or with `problem` when there was none. Call `setState` with
   * the repaired file's state before clearing the problem.
   */
  setStateProblem(problem: WorkbenchError | undefined): void {
    this.toolState.setProblem(problem);
  }

  /**
   * Marks the config's last edit as not applied (the previous config keeps serving) or, with `undefined`, the config
   * as applied again: open_toolbox answers carry the problem meanwhile, so the model can say why a toolbox is missing.
   */
  setConfigProblem(problem: WorkbenchError | undefined): void {
    this.configProblem = problem;
  }

  /** The state file's problem while it is broken, and whether a good state read earlier in this run is in force. */
  brokenState(): { problem: WorkbenchError; lastGood: boolean } | undefined {
    return this.toolState.broken();
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
    const [policy, before] = [this.toolState.policyFor(config), this.toolState.policy];
    this.current = config;
    this.toolboxes = new Map(config.toolboxes.map((t) => [t.name, t]));
    this.toolsets = resolveToolsets(config);
    this.overrides = createOverrideResolver(config);
    this.toolState.apply(policy);
    const outcome = this.scopes.reload(config, (toolbox, server, tool) => before.check(toolbox, server, tool).enabled);
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

  /** How many times a downstream server was connected again after it had been connected (a crash, a lost link). */
  restartCount(): number {
    return this.scopes.restartCount();
  }

  /** The downstream connects of every session since start: how many succeeded, and which servers failed how often. */
  connectTally(): ConnectTally {
    return this.scopes.connectTally();
  }

  /** Downstream connections open now across every session; a `shared: true` server's one connection counts once. */
  connectionCount(): number {
    return this.scopes.connectionCount();
  }

  toolboxConfigs(): ToolboxConfig[] {
    return this.current.toolboxes;
  }

  /** Every name open_toolbox and use_tool accept as `toolbox_name`: toolboxes, then toolsets. */
  catalogNames(): string[] {
    return [...this.current.toolboxes.map((t) => t.name), ...(this.current.toolsets ?? []).map((t) => t.name)];
  }

  /** What a toolset resolves to (for `tools list --toolset`): see {@link describeNamedToolset}. */
  describeToolset(name: string, steps?: NextSteps): Promise<ToolStatusReport & { unmatched: string[] }> {
    return describeNamedToolset(this.reportSource(this.scopes.root, steps), name);
  }

  private toolsetHost(scope: Scope): ToolsetHost<ToolEntry> {
    return {
      connect: (toolbox, server) => scope.manager.connectServer(toolbox, server), status: (toolbox) => scope.manager.serverStatus(toolbox),
      catalog: (toolbox) => this.cachedCatalog(scope, toolbox),
    };
  }

  /** Human- and model-readable guidance for the `initialize` result. */
  instructions(): string {
    return workbenchInstructions(this.config, this.discovery.budget(), this.toolState.sessionToolsets);
  }

  /**
   * `open_toolbox`: the catalog under the context budget (a compact index when the full one does not fit), full
   * entries for named tools, or search results — for a toolbox, a toolset (its tools across toolboxes, connecting only
   * the servers it needs), or every toolbox (a search without `toolbox_name`). Throws TOOLBOX_NOT_FOUND for an unknown
   * name. `options.onprogress` reports progress to the client while it waits.
   */
  async openToolbox(request: OpenToolboxRequest, session?: SessionScope, options: OpenOptions = {}): Promise<BudgetedAnswer> {
    const observer = this.options.observer;
    if (!observer) return openRequest(this.openHost, request, this.scopes.of(session), options);
    return observed(
      { observer, log: this.log },
      () => ({ kind: 'open', session: options.sessionLabel, principal: options.principal, toolbox: request.toolbox_name ?? '*' }),
      () => openRequest(this.openHost, request, this.scopes.of(session), options),
      (answer) => ({ outcome: answer.isError ? 'failed' : 'ok', result_bytes: Buffer.byteLength(answer.text) }),
    );
  }

  /**
   * `use_tool`: resolves the name, refuses disabled tools before connecting anything, validates arguments against
   * the tool's inputSchema, forwards the call and returns the downstream result as it came (see use-tool.ts).
   */
  useTool(toolboxName: string, toolName: string, args: Record<string, unknown> | undefined, options: UseToolOptions = {}): Promise<CallToolResult> {
    const observer = this.options.observer;
    if (!observer) return useTool(this.useToolHost, toolboxName, toolName, args, options);
    return observed(
      { observer, log: this.log },
      () => ({ kind: 'call', session: options.sessionLabel, principal: options.principal, toolbox: toolboxName, ...calledTool(this.toolboxes.has(toolboxName) ? this.cachedCatalog(this.scopes.of(options.scope), toolboxName).catalog : undefined, toolName) }),
      () => useTool(this.useToolHost, toolboxName, toolName, args, options),
      (result) => ({ ...outcomeOf(result), result_bytes: Buffer.byteLength(JSON.stringify(result)) }),
    );
  }

  /**
   * Each server's live tools as it listed them to the session (else the workbench's own), for the given toolbox (or
   * all): what `tools approve` and `tools diff` compare with the approved definitions (see {@link serverListings}).
   */
  serverListings(toolbox?: string, session?: SessionScope, steps?: NextSteps): Promise<ServerListings> {
    return serverListings(this.reportSource(this.scopes.of(session), steps), toolbox);
  }

  /** Every tool of the given toolbox (or of all), enabled or not, and why not: see {@link listToolStatuses}. */
  listAllTools(toolbox?: string, session?: SessionScope, steps?: NextSteps): Promise<ToolStatusReport> {
    return listToolStatuses(this.reportSource(this.scopes.of(session), steps), toolbox);
  }

  /** `steps`: what an unknown toolbox's or toolset's error says to do next; default: the model's. */
  private reportSource(scope: Scope, steps: NextSteps = MODEL_STEPS): ReportSource {
    return {
      config: this.current,
      toolsets: this.toolsets,
      catalogNames: () => this.catalogNames(),
      manager: scope.manager,
      toolsetHost: this.toolsetHost(scope),
      statusOf: (toolbox) => this.statusOf(scope, toolbox),
      steps,
    };
  }

  private statusOf(scope: Scope, toolbox: string): ToolStatus[] {
    return toolStatuses(this.cachedCatalog(scope, toolbox).catalog, this.overrides);
  }

  /**
   * Whether a canonical name or glob refers to something that exists as far as the workbench knows (see
   * {@link isKnownToolName}), from the catalogs of the given session (over HTTP each has its own connections), else
   * of the workbench's own.
   */
  isKnownName(name: string, session?: SessionScope): boolean {
    return isKnownToolName(name, this.toolboxes, this.scopes.of(session).manager);
  }

  async close(): Promise<void> {
    await this.scopes.close();
    await Promise.allSettled([this.options.catalogCache?.flush(), this.discovery.flush(), this.pins?.flush()]);
  }

  private cachedCatalog(scope: Scope, toolbox: string): CachedCatalog {
    let cached = scope.catalogs.get(toolbox);
    if (!cached) {
      const catalog = new ToolboxCatalog(toolbox, scope.manager.serverTools(toolbox), this.toolState.policy, this.pins?.policy(this.current, scope.manager));
      const entries = catalog.tools.map((t) => toEntry(t, this.overrides));
      cached = { catalog, entries };
      scope.catalogs.set(toolbox, cached);
    }
    return cached;
  }

  private toolboxNames(): string {
    return this.catalogNames().join(', ') || '(none configured)';
  }
}

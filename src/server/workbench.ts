import { Ajv, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import {
  ErrorCode,
  McpError,
  type CallToolResult,
  type ClientCapabilities,
  type LoggingMessageNotification,
  type Result,
  type Tool,
} from '@modelcontextprotocol/sdk/types.js';
import { ClientManager, type CallOptions, type RelayedMethod, type UpstreamRelay } from '../clients/client-manager.js';
import type { ServerConfig, ToolboxConfig, WorkbenchConfig } from '../config/types.js';
import { WorkbenchError, errorMessage, isWorkbenchError } from '../errors.js';
import type { Logger } from '../log.js';
import { compileGlob } from '../catalog/glob.js';
import { formatToolName, parseToolName, type ToolNameParts } from '../catalog/names.js';
import { ToolboxCatalog, type CatalogTool, type ToolLookup } from '../catalog/toolbox-catalog.js';
import { createVisibilityPolicy, type ToolState, type VisibilityPolicy } from '../catalog/visibility.js';
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
  /** Present when disabled: which source (config, cli, state), the rule that applied, and a sentence. */
  disabled_by?: { source: string; rule: string; reason: string };
}

export interface ToolStatusReport {
  tools: ToolStatus[];
  /** Servers that could not be connected, so their tools could not be listed. */
  servers_failed: { toolbox: string; server: string; error: string }[];
}

/** What `open_toolbox` answers when `detail` is `"full"` (README: "open_toolbox"); other answers are `Answer`s. */
export type OpenToolboxResult = Omit<Answer, 'tools'> & { tools: ToolEntry[] };

/**
 * A connected client session. Several can share one Workbench (HTTP); downstream servers are shared too, so their
 * log messages and requests (sampling, elicitation, roots) are routed to the session whose call is in flight on that
 * server, else to the session that used that server last, else to the most recently active session.
 */
export interface UpstreamSession {
  capabilities(): ClientCapabilities | undefined;
  /** Sends a request to this session's client outside of any call. */
  request(request: { method: RelayedMethod; params?: Record<string, unknown> }, signal: AbortSignal): Promise<Result>;
  /** Delivers a downstream log message (subject to the client's logging/setLevel). */
  log(params: LoggingMessageNotification['params']): void;
}

/** The use_tool call being made, so requests from the server it calls travel back with it (the same HTTP stream). */
export interface CallContext {
  session: UpstreamSession;
  request(request: { method: RelayedMethod; params?: Record<string, unknown> }, signal: AbortSignal): Promise<Result>;
}

export interface UseToolOptions extends CallOptions {
  call?: CallContext;
}

const CAPABILITY_OF: Record<RelayedMethod, 'sampling' | 'elicitation' | 'roots'> = {
  'sampling/createMessage': 'sampling',
  'elicitation/create': 'elicitation',
  'roots/list': 'roots',
};

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
  readonly manager: ClientManager;
  readonly config: WorkbenchConfig;
  private readonly toolboxes: Map<string, ToolboxConfig>;
  private readonly log: Logger;
  private readonly cliDisabled: readonly string[];
  private policy: VisibilityPolicy;
  private readonly catalogs = new Map<string, CachedCatalog>();
  private readonly validators = new WeakMap<Tool, ValidateFunction | null>();
  private readonly outputValidators = new WeakMap<Tool, ValidateFunction | null>();
  /** Client sessions, most recently active last. */
  private sessions: UpstreamSession[] = [];
  /** Per `toolbox/server`: the calls in flight on it, and the session that called it last. */
  private readonly activity = new Map<string, { calls: Set<CallContext>; lastSession?: UpstreamSession }>();
  private ajv: Ajv | undefined;
  private readonly discovery: Discovery;

  constructor(options: WorkbenchOptions) {
    this.config = options.config;
    this.log = options.log;
    this.cliDisabled = options.cliDisabled ?? [];
    this.toolboxes = new Map(options.config.toolboxes.map((t) => [t.name, t]));
    this.policy = createVisibilityPolicy({ config: options.config, cliDisabled: this.cliDisabled, state: options.state });
    this.manager = new ClientManager({
      config: options.config,
      env: options.env,
      log: options.log,
      clientInfo: { name: 'mcp-workbench', version: options.version },
      maxMessageBytes: options.maxMessageBytes,
      onToolsChanged: (toolbox, server) => {
        this.catalogs.delete(toolbox);
        this.discovery.toolsChanged(toolbox, server);
      },
      onLogMessage: (toolbox, server, params) => {
        const logger = params.logger ? `${toolbox}/${server}/${params.logger}` : `${toolbox}/${server}`;
        // An MCP log message carries no request id. When calls from several sessions are in flight on this shared
        // server, nobody can tell whose it is: it stays in the workbench's own log rather than reach another client.
        const sessions = this.sessionsFor(toolbox, server, () => true);
        if (sessions.length === 1) sessions[0]!.log({ ...params, logger });
        else if (sessions.length > 1) this.log.debug(`log message from ${logger} not forwarded: calls from ${sessions.length} sessions are in flight`);
      },
      upstream: this.relay(),
    });
    this.discovery = new Discovery({
      config: options.config,
      manager: this.manager,
      policy: () => this.policy,
      liveCatalog: (toolbox) => this.cachedCatalog(toolbox),
      toEntry,
      cache: options.catalogCache,
      budget: options.catalogBudget,
    });
  }

  /** Registers a client session for relayed requests; returns an unregister function. */
  addSession(session: UpstreamSession): () => void {
    this.sessions.push(session);
    return () => {
      this.sessions = this.sessions.filter((s) => s !== session);
    };
  }

  /** Marks a session as the one acting now (most recently active last). */
  private touchSession(session: UpstreamSession): void {
    if (this.sessions.at(-1) === session || !this.sessions.includes(session)) return;
    this.sessions = [...this.sessions.filter((s) => s !== session), session];
  }

  /**
   * Sessions a message from `toolbox/server` belongs to: those with a call in flight on it; else the one that used it
   * last; else the most recently active session. `accept` filters (e.g. by capability) at each step.
   */
  private sessionsFor(toolbox: string, server: string, accept: (s: UpstreamSession) => boolean): UpstreamSession[] {
    const activity = this.activity.get(`${toolbox}/${server}`);
    const inFlight = [...new Set([...(activity?.calls ?? [])].map((c) => c.session))].filter(accept);
    if (inFlight.length > 0) return inFlight;
    const last = activity?.lastSession;
    if (last && this.sessions.includes(last) && accept(last)) return [last];
    const recent = [...this.sessions].reverse().find(accept);
    return recent ? [recent] : [];
  }

  /**
   * Runs a forwarded call while recording it as in flight on its server. Returns the call's own promise (the
   * bookkeeping hangs off it), so the hot path gains no promise turn.
   */
  private tracked<T>(toolbox: string, server: string, call: CallContext | undefined, run: () => Promise<T>): Promise<T> {
    if (!call) return run();
    const key = `${toolbox}/${server}`;
    let activity = this.activity.get(key);
    if (!activity) this.activity.set(key, (activity = { calls: new Set() }));
    const calls = activity.calls;
    calls.add(call);
    activity.lastSession = call.session;
    this.touchSession(call.session);
    const done = (): void => void calls.delete(call);
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

  private relay(): UpstreamRelay {
    return {
      capabilities: () => {
        const caps = this.sessions.at(-1)?.capabilities() ?? {};
        return {
          ...(caps.sampling ? { sampling: caps.sampling } : {}),
          ...(caps.elicitation ? { elicitation: caps.elicitation } : {}),
          ...(caps.roots ? { roots: caps.roots } : {}),
        };
      },
      request: (toolbox, server, request, signal) => {
        const capability = CAPABILITY_OF[request.method];
        const supports = (s: UpstreamSession): boolean => s.capabilities()?.[capability] !== undefined;
        // Prefer the newest in-flight call on that server: its reply stream is open and it is what asked.
        const calls = [...(this.activity.get(`${toolbox}/${server}`)?.calls ?? [])].filter((c) => supports(c.session));
        const call = calls.at(-1);
        if (call) return call.request(request, signal);
        const session = this.sessionsFor(toolbox, server, supports)[0];
        if (!session) {
          return Promise.reject(
            new McpError(ErrorCode.InvalidRequest, `the client connected to mcp-workbench does not support ${capability} (requested by ${toolbox}/${server})`),
          );
        }
        return session.request(request, signal);
      },
    };
  }

  /** Replace the state-file lists; catalogs are re-derived lazily on next use. */
  setState(state: ToolState | undefined): void {
    this.policy = createVisibilityPolicy({ config: this.config, cliDisabled: this.cliDisabled, state });
    this.catalogs.clear();
  }

  toolboxConfigs(): ToolboxConfig[] {
    return this.config.toolboxes;
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
    return lines.join('\n');
  }

  /**
   * `open_toolbox`: the catalog under the context budget, full entries for named tools, or search results (see
   * Discovery). Throws TOOLBOX_NOT_FOUND for an unknown toolbox.
   */
  openToolbox(request: OpenToolboxRequest): Promise<BudgetedAnswer> {
    return this.discovery.open(request);
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
    const toolbox = this.toolboxes.get(toolboxName);
    if (!toolbox) {
      return Promise.resolve(errorResult(
        `Unknown toolbox "${toolboxName}". Available toolboxes: ${this.toolboxNames()}. Call open_toolbox with one of them to see its tools.`,
        'TOOLBOX_NOT_FOUND',
      ));
    }
    const parts = parseToolName(toolName);
    if (parts && parts.toolbox !== toolboxName && this.toolboxes.has(parts.toolbox)) {
      return Promise.resolve(errorResult(
        `Tool "${toolName}" belongs to toolbox "${parts.toolbox}", not "${toolboxName}". Call use_tool with toolbox_name "${parts.toolbox}".`,
        'TOOL_NOT_FOUND',
      ));
    }
    const knownServer = parts && parts.toolbox === toolboxName ? toolbox.servers.find((s) => s.name === parts.server) : undefined;
    const lookup = this.cachedCatalog(toolboxName).catalog.find(toolName);
    // A bare or loose name is unique only if it is unique across the whole toolbox, not just the servers up so far.
    const wholeToolboxNeeded = !knownServer && toolbox.servers.some((s) => !this.manager.isConnected(toolboxName, s.name));
    if ('found' in lookup && !wholeToolboxNeeded) return this.forward(toolboxName, lookup.found, args, options);
    return this.connectThenUse(toolbox, toolName, parts, knownServer, lookup, wholeToolboxNeeded, args, options);
  }

  /** `use_tool` for a name the catalog cannot answer yet: connects what the name needs, then resolves it again. */
  private async connectThenUse(
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
      if (knownServer && !this.manager.isConnected(toolboxName, knownServer.name)) {
        const failure = await this.manager.connectServer(toolboxName, knownServer.name);
        if (failure) return errorResult(`Cannot call "${toolName}": ${failure}`, 'CONNECT_FAILED');
      } else if (!knownServer) {
        await this.manager.openToolbox(toolboxName);
      }
      lookup = this.cachedCatalog(toolboxName).catalog.find(toolName);
    }
    if ('hidden' in lookup) {
      return errorResult(disabledMessage(lookup.hidden.name, lookup.hidden.visibility.reason, lookup.hidden.visibility.source), 'TOOL_DISABLED');
    }
    if ('ambiguous' in lookup) {
      return errorResult(
        `Tool name "${toolName}" is ambiguous in toolbox "${toolboxName}": it matches ${lookup.ambiguous.map((t) => t.name).join(', ')}. Use the full name.`,
        'TOOL_NOT_FOUND',
      );
    }
    if ('notFound' in lookup && parts?.toolbox === toolboxName && !knownServer) {
      return errorResult(
        `Tool "${toolName}" names server "${parts.server}", which toolbox "${toolboxName}" does not have. Its servers: ${toolbox.servers.map((s) => s.name).join(', ')}. Call open_toolbox {"toolbox_name":"${toolboxName}"} to list the valid names.`,
        'TOOL_NOT_FOUND',
      );
    }
    if ('notFound' in lookup) {
      const failed = toolbox.servers.filter((s) => !this.manager.isConnected(toolboxName, s.name)).map((s) => s.name);
      const hint = lookup.suggestions.length > 0 ? ` Closest names: ${lookup.suggestions.join(', ')}.` : '';
      const down = failed.length > 0 ? ` Not connected (their tools are unavailable): ${failed.join(', ')}.` : '';
      return errorResult(
        `Unknown tool "${toolName}" in toolbox "${toolboxName}".${hint}${down} Call open_toolbox {"toolbox_name":"${toolboxName}"} to list the valid names.`,
        'TOOL_NOT_FOUND',
      );
    }
    return this.forward(toolboxName, lookup.found, args, options);
  }

  /** Validates the arguments, forwards the call, and checks what came back. */
  private forward(toolboxName: string, entry: CatalogTool, args: Record<string, unknown> | undefined, options: UseToolOptions): Promise<CallToolResult> {
    const validate = this.inputValidator(entry.tool);
    const input = args ?? {};
    if (validate && !validate(input)) {
      const problems = (validate.errors ?? []).map((e) => `${e.instancePath || '(arguments)'} ${e.message ?? 'is invalid'}${describeParams(e.params)}`);
      return Promise.resolve(errorResult(
        `Invalid arguments for "${entry.name}" (server "${entry.server}", tool "${entry.tool.name}"):\n${problems.map((p) => `- ${p}`).join('\n')}\nFix the arguments to match the tool's inputSchema: ${JSON.stringify(entry.tool.inputSchema)}`,
        'INVALID_ARGUMENTS',
      ));
    }

    return this.tracked(toolboxName, entry.server, options.call, () =>
      this.manager.callTool(toolboxName, entry.server, entry.tool.name, args, options),
    ).then(
      (result) => this.checkOutput(entry, result),
      (error: unknown) => {
        if (isWorkbenchError(error)) return errorResult(`${entry.name}: ${error.toDisplayString()}`, error.code);
        throw error;
      },
    );
  }

  /**
   * Every tool of the given toolbox (or of all toolboxes), enabled or not, with the source that disabled it.
   * Connects what it must; servers that fail are reported, not thrown.
   */
  async listAllTools(toolbox?: string): Promise<ToolStatusReport> {
    const names = toolbox === undefined ? this.config.toolboxes.map((t) => t.name) : [this.requireToolbox(toolbox).name];
    const opened = await Promise.all(names.map(async (name) => ({ name, result: await this.manager.openToolbox(name) })));
    const report: ToolStatusReport = { tools: [], servers_failed: [] };
    for (const { name, result } of opened) {
      for (const failure of result.failed) report.servers_failed.push({ toolbox: name, ...failure });
      const { catalog } = this.cachedCatalog(name);
      const all = [
        ...catalog.tools.map((t) => ({ t, status: undefined })),
        ...catalog.hidden.map((t) => ({ t, status: t.visibility })),
      ];
      for (const { t, status } of all) {
        report.tools.push({
          name: t.name,
          toolbox: t.toolbox,
          server: t.server,
          original_name: t.tool.name,
          enabled: status === undefined,
          ...(status ? { disabled_by: { source: status.source, rule: status.rule, reason: status.reason } } : {}),
        });
      }
    }
    report.tools.sort((a, b) => a.name.localeCompare(b.name));
    return report;
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
    this.sessions = [];
    await this.manager.close();
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

  private cachedCatalog(toolbox: string): CachedCatalog {
    let cached = this.catalogs.get(toolbox);
    if (!cached) {
      const catalog = new ToolboxCatalog(toolbox, this.manager.serverTools(toolbox), this.policy);
      const entries = catalog.tools.map(toEntry);
      cached = { catalog, entries };
      this.catalogs.set(toolbox, cached);
    }
    return cached;
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
      throw new WorkbenchError('TOOLBOX_NOT_FOUND', `Unknown toolbox "${name}". Available toolboxes: ${this.toolboxNames()}.`);
    }
    return toolbox;
  }

  private toolboxNames(): string {
    return this.config.toolboxes.map((t) => t.name).join(', ') || '(none configured)';
  }
}

function createAjv(): Ajv {
  const ajv = new Ajv({ allErrors: true, strict: false, validateSchema: false, addUsedSchema: false });
  addFormats(ajv);
  return ajv;
}

function toEntry(t: CatalogTool): ToolEntry {
  const title = t.tool.title ?? t.tool.annotations?.title;
  return {
    name: t.name,
    toolbox_name: t.toolbox,
    source_server: t.server,
    original_name: t.tool.name,
    ...(title !== undefined ? { title } : {}),
    description: `[${t.toolbox}/${t.server}] ${t.tool.description ?? ''}`.trimEnd(),
    inputSchema: t.tool.inputSchema,
    ...(t.tool.outputSchema !== undefined ? { outputSchema: t.tool.outputSchema } : {}),
    ...(t.tool.annotations !== undefined ? { annotations: t.tool.annotations } : {}),
  };
}

/** `_meta` key marking results the workbench produced itself (as opposed to a downstream tool's own error). */
export const ERROR_META_KEY = 'mcp-workbench/error';

export function errorResult(text: string, code = 'WORKBENCH_ERROR'): CallToolResult {
  return { isError: true, content: [{ type: 'text', text }], _meta: { [ERROR_META_KEY]: { code } } };
}

function disabledMessage(name: string, reason: string, source: string): string {
  const how =
    source === 'state'
      ? `Enable it with \`mcp-workbench tools enable ${name}\` (or enable_tools).`
      : source === 'cli'
        ? 'Remove it from the --disabled-tools option of the workbench to enable it.'
        : 'Change the workbench config to enable it.';
  return `Tool "${name}" is disabled: ${reason} (source: ${source}). ${how}`;
}

function describeParams(params: Record<string, unknown> | undefined): string {
  if (!params) return '';
  if (typeof params.additionalProperty === 'string') return ` ("${params.additionalProperty}")`;
  if (Array.isArray(params.allowedValues)) return ` (${params.allowedValues.map((v) => JSON.stringify(v)).join(', ')})`;
  return '';
}

import { basename } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import {
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  ErrorCode,
  ListRootsRequestSchema,
  ResultSchema,
  LoggingMessageNotificationSchema,
  McpError,
  ToolListChangedNotificationSchema,
  type CallToolResult,
  type ClientCapabilities,
  type LoggingMessageNotification,
  type Progress,
  type Result,
  type Tool,
} from '@modelcontextprotocol/sdk/types.js';
import type { ServerConfig, ToolboxConfig, WorkbenchConfig } from '../config/types.js';
import { WorkbenchError, errorMessage, type ServerFailure } from '../errors.js';
import { redactingLogger, type Logger } from '../log.js';
import { quoteClientText } from '../shared/client-text.js';
import { createRedactor, type Redact } from '../shared/redact.js';
import { CallChannel, MalformedResultError } from './call-channel.js';
import type { Cancellation } from '../shared/cancellation.js';
import { ChildProcessTransport, MESSAGE_TOO_LARGE_CODE } from './stdio-transport.js';
import { OrphanReaper, type GroupTracker } from './orphan-reaper.js';
import { createSseTransport, createTransport, describeUrl, legacySseStatus } from './transports.js';
import { failedServer, httpStatusOf, shuttingDown, stderrOf, summary, type FailedServer } from './server-failure.js';

/** Defaults for the per-server limits; each can be overridden per server in the config. */
export const DEFAULT_CONNECT_TIMEOUT_MS = 60_000;
export const DEFAULT_CALL_TIMEOUT_MS = 120_000;
/** Upper bound for any single wait on a call, however much progress the server reports. */
export const DEFAULT_MAX_TOTAL_CALL_MS = 15 * 60_000;
/** Largest single message accepted from a downstream server. */
export const DEFAULT_MAX_MESSAGE_BYTES = 32 * 1024 * 1024;
/** Reconnect backoff after repeated quick failures: 0, 0, 0.5 s, 1 s, 2 s … capped here. */
const MAX_BACKOFF_MS = 10_000;
/** A connection that lived this long before dying is treated as healthy: its crash starts the backoff afresh. */
const HEALTHY_LIFETIME_MS = 30_000;
const LIST_CHANGED_DEBOUNCE_MS = 100;
/** How often a server retired by a reload checks whether its last calls have finished. */
const RETIRE_POLL_MS = 100;
const MAX_TOOL_PAGES = 1000;
/**
 * The SDK's own request timeout (60 s by default) must never cut a connect short of `connectTimeoutMs`: ours fires
 * first and explains itself; the SDK's is only a backstop.
 */
const CONNECT_GRACE_MS = 5_000;

export interface ClientManagerOptions {
  config: WorkbenchConfig;
  /** The workbench's own environment, for children's safe defaults and `inheritEnv`. */
  env: Record<string, string | undefined>;
  log: Logger;
  clientInfo: { name: string; version: string };
  maxMessageBytes?: number;
  /** Called after a server's tool list changed (connected, refreshed, or lost). */
  onToolsChanged?: (toolbox: string, server: string) => void;
  /** Lines a stdio server wrote to stdout that are not JSON-RPC (instead of warnings in the log). */
  onStdoutNoise?: (toolbox: string, server: string, line: string) => void;
  /** Downstream `notifications/message`, to be forwarded upstream. */
  onLogMessage?: (toolbox: string, server: string, params: LoggingMessageNotification['params']) => void;
  /** Where server → client requests (sampling, elicitation, roots) from downstream servers are relayed. */
  upstream?: UpstreamRelay;
  /**
   * Where the connections of `shared: true` servers come from (one per server for every session, see
   * {@link SharedServers}). Without it every server gets a connection of this manager's own.
   */
  shared?: SharedServers;
  /** Process-group tracking shared with other managers; without it the manager runs an orphan reaper of its own. */
  groups?: GroupTracker;
}

/** Requests a downstream server may make of its client, which the workbench relays to its own client. */
export type RelayedMethod = 'sampling/createMessage' | 'elicitation/create' | 'roots/list';

export interface UpstreamRelay {
  /**
   * What the connected client supports. Downstream clients declare exactly these relayable capabilities, so a
   * server offers sampling/elicitation/roots features only when the real client can serve them.
   */
  capabilities(): Pick<ClientCapabilities, 'sampling' | 'elicitation' | 'roots'>;
  request(toolbox: string, server: string, request: { method: RelayedMethod; params?: Record<string, unknown> }, signal: AbortSignal): Promise<Result>;
}

export type { FailedServer } from './server-failure.js';

export interface OpenResult {
  connected: string[];
  failed: FailedServer[];
}

export interface CallOptions {
  /** Cancels the downstream call (notifications/cancelled) when the client cancels. */
  cancellation?: Cancellation;
  onprogress?: (progress: Progress) => void;
  /** The client's `_meta` for the call, sent on as it came (its progress token mapped, see CallChannel). */
  meta?: Record<string, unknown>;
}

interface Live {
  client: Client;
  transport: Transport;
  /** tools/call goes here, beside the Client (see CallChannel). */
  calls: CallChannel;
  tools: Tool[];
  /** Names the server listed more than once (each kept once in `tools`). */
  duplicates: string[];
  startedAt: number;
  dead: boolean;
}

/**
 * Owns every downstream connection. Nothing is spawned until a toolbox is opened or a tool is called; concurrent
 * requests for one server share one connect; a server that dies is reconnected on next use with backoff; `close()`
 * ends every child and its descendants.
 */
export class ClientManager {
  private toolboxes = new Map<string, { config: ToolboxConfig; slots: Map<string, ServerSlot> }>();
  /** The slots this manager owns and closes (not those of shared servers). */
  private own = new Set<ServerSlot>();
  private closing = false;
  /** Servers dropped by a reload, finishing their calls in flight before they close. */
  private readonly retiring = new Set<ServerSlot>();
  /** Ends the children's process groups if this process dies without closing them (unless given `groups`). */
  private readonly reaper: OrphanReaper | undefined;
  private readonly groups: GroupTracker;
  private redact: Redact;

  constructor(private readonly options: ClientManagerOptions) {
    this.reaper = options.groups ? undefined : new OrphanReaper(options.log);
    const groups = (this.groups = options.groups ?? this.reaper!);
    // Every message about a server (results, logs, doctor) passes through this: URLs, headers and env values hidden.
    const redact = (this.redact = createRedactor(options.config.secrets));
    for (const toolbox of options.config.toolboxes) {
      const slots = new Map<string, ServerSlot>();
      for (const server of toolbox.servers) {
        let slot = server.shared ? options.shared?.slot(toolbox.name, server) : undefined;
        if (!slot) this.own.add((slot = new ServerSlot(toolbox.name, server, options, groups, redact)));
        slots.set(server.name, slot);
      }
      this.toolboxes.set(toolbox.name, { config: toolbox, slots });
    }
  }

  toolboxNames(): string[] {
    return [...this.toolboxes.keys()];
  }

  /** Connects every server of the toolbox in parallel (each at most once at a time) and reports which failed. */
  async openToolbox(name: string): Promise<OpenResult> {
    const toolbox = this.requireToolbox(name);
    const slots = [...toolbox.slots.values()];
    const settled = await Promise.allSettled(slots.map((slot) => slot.ensure()));
    const result: OpenResult = { connected: [], failed: [] };
    settled.forEach((outcome, i) => {
      const server = slots[i]!.config.name;
      if (outcome.status === 'fulfilled') result.connected.push(server);
      else result.failed.push(failedServer(server, outcome.reason));
    });
    return result;
  }

  /** Connects one server of a toolbox (sharing any connect in flight); resolves with the failure, if any. */
  async connectServer(toolbox: string, server: string): Promise<WorkbenchError | undefined> {
    const slot = this.requireToolbox(toolbox).slots.get(server);
    if (!slot) return new WorkbenchError('TOOL_NOT_FOUND', `toolbox "${toolbox}" has no server "${server}"`);
    return slot.ensure().then(
      () => undefined,
      (error: unknown) => (error instanceof WorkbenchError ? error : new WorkbenchError('CONNECT_FAILED', errorMessage(error), { cause: error })),
    );
  }

  /** The tool lists of the toolbox's currently connected servers, in config order. */
  serverTools(toolbox: string): { server: string; tools: Tool[]; duplicates: string[] }[] {
    return [...this.requireToolbox(toolbox).slots.values()]
      .filter((slot) => slot.tools !== undefined)
      .map((slot) => ({ server: slot.config.name, tools: slot.tools!, duplicates: slot.duplicates }));
  }

  /** Whether a server is currently connected (used to decide if a toolbox needs opening). */
  isConnected(toolbox: string, server: string): boolean {
    return this.toolboxes.get(toolbox)?.slots.get(server)?.tools !== undefined;
  }

  /**
   * Forwards one tools/call. Resolves with the downstream result as it came; throws WorkbenchError
   * (CALL_TIMEOUT, SERVER_EXITED, CALL_FAILED, CONNECT_*) describing the server and tool.
   */
  callTool(toolbox: string, server: string, tool: string, args: Record<string, unknown> | undefined, options: CallOptions = {}): Promise<CallToolResult> {
    let slot: ServerSlot | undefined;
    try {
      slot = this.requireToolbox(toolbox).slots.get(server);
    } catch (error) {
      return Promise.reject(error);
    }
    if (!slot) return Promise.reject(new WorkbenchError('TOOL_NOT_FOUND', `toolbox "${toolbox}" has no server "${server}"`));
    return slot.call(tool, args, options);
  }

  /** Forwards the client's `notifications/roots/list_changed` to every connected server. */
  notifyRootsChanged(): void {
    for (const { slots } of this.toolboxes.values()) for (const slot of slots.values()) slot.notifyRootsChanged();
  }

  /**
   * Switches to a new config without a restart. A server whose launch settings (see {@link launchKey}) are unchanged
   * keeps its connection; a changed one is replaced by a fresh slot that connects on next use; the old connection
   * and those of removed servers and toolboxes close once their calls in flight have finished. Shared servers are
   * taken from (and retired by) their {@link SharedServers}. Returns the `toolbox/server` labels that were replaced or
   * removed.
   */
  reload(config: WorkbenchConfig): { replaced: string[]; removed: string[] } {
    this.redact = createRedactor(config.secrets);
    const next = new Map<string, { config: ToolboxConfig; slots: Map<string, ServerSlot> }>();
    const own = new Set<ServerSlot>();
    for (const toolbox of config.toolboxes) {
      const previous = this.toolboxes.get(toolbox.name)?.slots;
      const slots = new Map<string, ServerSlot>();
      for (const server of toolbox.servers) {
        let slot = server.shared ? this.options.shared?.slot(toolbox.name, server) : undefined;
        if (!slot) {
          const kept = previous?.get(server.name);
          const reuse = kept !== undefined && this.own.has(kept) && launchKey(kept.config) === launchKey(server);
          slot = reuse ? kept : new ServerSlot(toolbox.name, server, this.options, this.groups, this.redact);
          own.add(slot);
        }
        slots.set(server.name, slot);
      }
      next.set(toolbox.name, { config: toolbox, slots });
    }
    const outcome = { replaced: [] as string[], removed: [] as string[] };
    for (const [toolboxName, { slots }] of this.toolboxes) {
      for (const [serverName, slot] of slots) {
        const successor = next.get(toolboxName)?.slots.get(serverName);
        if (successor === slot) continue;
        (successor ? outcome.replaced : outcome.removed).push(`${toolboxName}/${serverName}`);
        if (!this.own.has(slot)) continue; // a shared server: its SharedServers retires it
        this.retiring.add(slot);
        void slot.retire().finally(() => this.retiring.delete(slot));
      }
    }
    this.toolboxes = next;
    this.own = own;
    return outcome;
  }

  /** Ends every connection and child process tree it owns (shared servers stay up); safe to call more than once. */
  async close(): Promise<void> {
    this.closing = true;
    // Shutting down does not wait for the calls of retired servers: they end with everything else.
    await Promise.allSettled([...this.own, ...this.retiring].map((slot) => slot.close()));
    this.reaper?.close();
  }

  private requireToolbox(name: string): { config: ToolboxConfig; slots: Map<string, ServerSlot> } {
    if (this.closing) throw new WorkbenchError('SHUTTING_DOWN', 'the workbench is shutting down (or this client session ended); start a new session to call tools');
    const toolbox = this.toolboxes.get(name);
    if (!toolbox) {
      throw new WorkbenchError('TOOLBOX_NOT_FOUND', `unknown toolbox ${quoteClientText(name)}; toolboxes: ${this.toolboxNames().join(', ') || '(none configured)'}`);
    }
    return toolbox;
  }
}

/** The settings that decide how a server is started and called; any change means a new connection. */
export function launchKey(config: ServerConfig): string {
  const { name: _name, disabledTools: _disabled, toolFilters: _filters, toolOverrides: _overrides, ...launch } = config;
  return JSON.stringify(launch);
}

/**
 * One connection per `shared: true` server for every session's ClientManager (HTTP serving). Its relay and log
 * routing are the ones given here, not a session's: see the README's "Serving over HTTP" for who gets what.
 */
export class SharedServers {
  private readonly slots = new Map<string, ServerSlot>();
  private readonly retiring = new Set<ServerSlot>();
  private readonly reaper: OrphanReaper | undefined;
  private readonly groups: GroupTracker;
  private readonly redact: Redact;

  constructor(private readonly options: ClientManagerOptions) {
    this.reaper = options.groups ? undefined : new OrphanReaper(options.log);
    this.groups = options.groups ?? this.reaper!;
    this.redact = createRedactor(options.config.secrets);
  }

  /** The one slot of a shared server; a server whose launch settings changed (a reload) gets a new one. */
  slot(toolbox: string, server: ServerConfig): ServerSlot {
    const key = `${toolbox}/${server.name}`;
    let slot = this.slots.get(key);
    if (slot && launchKey(slot.config) !== launchKey(server)) {
      const old = slot;
      this.retiring.add(old);
      void old.retire().finally(() => this.retiring.delete(old));
      slot = undefined;
    }
    if (!slot) this.slots.set(key, (slot = new ServerSlot(toolbox, server, this.options, this.groups, this.redact)));
    return slot;
  }

  /** After a reload: retires the shared servers the new config no longer has, once their calls have finished. */
  reload(config: WorkbenchConfig): void {
    const keep = new Set(config.toolboxes.flatMap((t) => t.servers.filter((s) => s.shared).map((s) => `${t.name}/${s.name}`)));
    for (const [key, slot] of this.slots) {
      if (keep.has(key)) continue;
      this.slots.delete(key);
      this.retiring.add(slot);
      void slot.retire().finally(() => this.retiring.delete(slot));
    }
  }

  async close(): Promise<void> {
    await Promise.allSettled([...this.slots.values(), ...this.retiring].map((slot) => slot.close()));
    this.reaper?.close();
  }
}

/** One configured server: its live connection (if any), the single in-flight connect, and crash bookkeeping. */
class ServerSlot {
  private live: Live | undefined;
  private pending: Promise<Live> | undefined;
  /** Transports being connected right now, so close() can end them too. */
  private readonly starting = new Set<Transport>();
  private quickFailures = 0;
  private retryAt = 0;
  /** Why the last connect attempt failed, while no connect has succeeded since. */
  private lastConnectError: WorkbenchError | undefined;
  private closed = false;
  /** An `http` entry that answered like a legacy SSE server: it is connected over SSE from then on. */
  private legacySse = false;
  private refreshTimer: NodeJS.Timeout | undefined;
  private refreshing: Promise<void> | undefined;
  private readonly log: Logger;
  private readonly label: string;

  constructor(
    private readonly toolbox: string,
    readonly config: ServerConfig,
    private readonly options: ClientManagerOptions,
    private readonly groups: GroupTracker,
    private readonly redact: Redact,
  ) {
    this.log = redactingLogger(options.log.child(`${toolbox}/${config.name}`), redact);
    this.label = `server "${config.name}" of toolbox "${toolbox}"`;
  }

  get tools(): Tool[] | undefined {
    return this.live && !this.live.dead ? this.live.tools : undefined;
  }

  get duplicates(): string[] {
    return this.live && !this.live.dead ? this.live.duplicates : [];
  }

  ensure(): Promise<Live> {
    if (this.live && !this.live.dead) return Promise.resolve(this.live);
    this.pending ??= this.connect().finally(() => {
      this.pending = undefined;
    });
    return this.pending;
  }

  call(tool: string, args: Record<string, unknown> | undefined, options: CallOptions): Promise<CallToolResult> {
    // Connected: straight to the channel, without a promise turn for the connect that is not needed.
    const live = this.live;
    if (live && !live.dead) return this.callOn(live, tool, args, options);
    return this.ensure().then((connected) => this.callOn(connected, tool, args, options));
  }

  /**
   * Closes this slot once its calls in flight have settled (a reload removed or replaced it). Polled rather than
   * counted per call, so the call path pays nothing for it; a connect in flight is waited for first, as the calls
   * queued on it start right after.
   */
  async retire(): Promise<void> {
    await this.pending?.catch(() => {});
    while (!this.closed && (this.live?.calls.inFlight ?? 0) > 0) await sleep(RETIRE_POLL_MS, undefined, { ref: false });
    // The whole manager may have closed it meanwhile (shutdown).
    if (!this.closed) await this.close();
  }

  private callOn(live: Live, tool: string, args: Record<string, unknown> | undefined, options: CallOptions): Promise<CallToolResult> {
    const timeout = this.config.timeoutMs ?? DEFAULT_CALL_TIMEOUT_MS;
    // The result is returned as it came; the output-schema check is the caller's to make.
    return live.calls.call(tool, args, {
      cancellation: options.cancellation,
      onprogress: options.onprogress,
      meta: options.meta,
      timeoutMs: timeout,
      maxTotalMs: Math.max(timeout, DEFAULT_MAX_TOTAL_CALL_MS),
      describeError: (error) => this.redactError(this.describeCallError(error, live, tool, timeout, options.cancellation)),
    }) as Promise<CallToolResult>;
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.refreshTimer);
    const transports = [...this.starting];
    if (this.live) {
      this.live.dead = true;
      this.live.calls.close(new McpError(ErrorCode.ConnectionClosed, 'the workbench is shutting down'));
      transports.push(this.live.transport);
    }
    await Promise.allSettled(transports.map((t) => t.close()));
  }

  private async connect(): Promise<Live> {
    if (this.closed) throw shuttingDown(this.label);
    const wait = this.retryAt - Date.now();
    if (wait > 0 && this.lastConnectError) {
      // A server that keeps failing to start must not stall every open_toolbox of its toolbox: answer at once.
      const { code, message, failure } = this.lastConnectError;
      throw new WorkbenchError(code, `${message} (not retried yet: it failed ${this.quickFailures} times in a row; next attempt in ${Math.ceil(wait / 1000)} s)`, {
        failure,
      });
    }
    if (wait > 0) {
      // A server that crashed after working: the caller wants it back, so wait out the backoff and reconnect.
      this.log.info(`waiting ${wait} ms before reconnecting (it failed ${this.quickFailures} times in a row)`);
      await new Promise((r) => setTimeout(r, wait));
    }
    const timeoutMs = this.config.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS;
    const remote = this.config.type === 'stdio' ? undefined : this.config;
    // An `http` server already found to speak only legacy SSE goes straight to SSE on reconnects.
    let transport =
      remote && this.legacySse
        ? createSseTransport(remote, this.options.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES)
        : createTransport(this.config, {
            workbenchEnv: this.options.env,
            maxMessageBytes: this.options.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES,
            log: this.log,
            groups: this.groups,
            onNoise: this.options.onStdoutNoise && ((line) => this.options.onStdoutNoise!(this.toolbox, this.config.name, line)),
          });
    let client = this.createClient();
    this.starting.add(transport);
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      void transport.close();
    }, timeoutMs);
    const started = Date.now();
    try {
      try {
        await client.connect(transport, { timeout: timeoutMs + CONNECT_GRACE_MS });
      } catch (error) {
        const status = legacySseStatus(error);
        if (remote?.type !== 'http' || this.legacySse || timedOut || status === undefined) throw error;
        // The MCP spec's backwards-compatibility path: a 4xx to the initialize POST means a legacy HTTP+SSE server.
        // The SSE attempt gets a fresh Client: the failed one has already been closed by its connect().
        this.legacySse = true;
        this.log.info(`${describeUrl(remote.url)} answered HTTP ${status} to Streamable HTTP; using the legacy SSE transport`);
        this.starting.delete(transport);
        await transport.close().catch(() => {});
        transport = createSseTransport(remote, this.options.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES);
        client = this.createClient();
        this.starting.add(transport);
        try {
          await client.connect(transport, { timeout: timeoutMs + CONNECT_GRACE_MS });
        } catch (sseError) {
          this.legacySse = false;
          throw new Error(`Streamable HTTP was refused (HTTP ${status}) and the legacy SSE transport failed too: ${errorMessage(sseError)}`, {
            cause: sseError,
          });
        }
      }
      const { tools, duplicates } = await listAllTools(client, this.log, this.label, timeoutMs + CONNECT_GRACE_MS);
      if (timedOut) throw new Error('timed out');
      if (this.closed) throw shuttingDown(this.label);
      const live: Live = { client, transport, calls: new CallChannel(transport), tools, duplicates, startedAt: Date.now(), dead: false };
      this.live = live;
      client.onclose = () => this.onClosed(live);
      this.watch(live);
      this.lastConnectError = undefined;
      this.log.info(`connected in ${Date.now() - started} ms, ${tools.length} tools`);
      this.options.onToolsChanged?.(this.toolbox, this.config.name);
      return live;
    } catch (error) {
      // Decide the cause before closing: ending a process tree takes a moment, and the connect timer must not fire
      // meanwhile and turn "exited with code 3" into "timed out".
      clearTimeout(timer);
      const described = this.redactError(this.describeConnectError(error, transport, timedOut, timeoutMs));
      await transport.close().catch(() => {});
      this.noteFailure(0);
      this.lastConnectError = described;
      this.log.warn(described.message);
      throw described;
    } finally {
      clearTimeout(timer);
      this.starting.delete(transport);
    }
  }

  /** A downstream client declaring (and relaying) exactly the relayable capabilities of the upstream client. */
  private createClient(): Client {
    const upstream = this.options.upstream;
    const capabilities = upstream?.capabilities() ?? {};
    const client = new Client(this.options.clientInfo, { capabilities });
    if (!upstream) return client;
    const relay = (method: RelayedMethod) => (request: { params?: Record<string, unknown> }, extra: { signal: AbortSignal }) => {
      this.log.debug(`relaying ${method} to the client`);
      return upstream.request(this.toolbox, this.config.name, { method, params: request.params }, extra.signal);
    };
    if (capabilities.sampling) client.setRequestHandler(CreateMessageRequestSchema, relay('sampling/createMessage') as never);
    if (capabilities.elicitation) client.setRequestHandler(ElicitRequestSchema, relay('elicitation/create') as never);
    if (capabilities.roots) client.setRequestHandler(ListRootsRequestSchema, relay('roots/list') as never);
    return client;
  }

  /** Tells the server the client's roots changed (only if it was told the client has roots). */
  notifyRootsChanged(): void {
    const live = this.live;
    if (live && !live.dead && this.options.upstream?.capabilities().roots) {
      void live.client.sendRootsListChanged().catch(() => {});
    }
  }

  private watch(live: Live): void {
    live.client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
      clearTimeout(this.refreshTimer);
      this.refreshTimer = setTimeout(() => void this.refresh(live), LIST_CHANGED_DEBOUNCE_MS);
    });
    live.client.setNotificationHandler(LoggingMessageNotificationSchema, (notification) => {
      this.options.onLogMessage?.(this.toolbox, this.config.name, notification.params);
    });
  }

  /** Re-reads the catalog after tools/list_changed; one refresh at a time, a change during one schedules another. */
  private async refresh(live: Live): Promise<void> {
    if (this.refreshing) {
      await this.refreshing;
      if (live.dead) return;
    }
    this.refreshing = (async () => {
      try {
        ({ tools: live.tools, duplicates: live.duplicates } = await listAllTools(live.client, this.log, this.label));
        this.log.info(`tool list changed: now ${live.tools.length} tools`);
        this.options.onToolsChanged?.(this.toolbox, this.config.name);
      } catch (error) {
        this.log.warn(`could not refresh the tool list after a change: ${errorMessage(error)}`);
      }
    })().finally(() => {
      this.refreshing = undefined;
    });
    await this.refreshing;
  }

  private onClosed(live: Live): void {
    if (live.dead) return;
    live.dead = true;
    live.calls.close(new McpError(ErrorCode.ConnectionClosed, 'Connection closed'));
    if (this.live === live) this.live = undefined;
    // The process may be gone but what it started may not: end its process group and known descendants too.
    void live.transport.close().catch(() => {});
    if (this.closed) return;
    this.noteFailure(Date.now() - live.startedAt);
    this.log.warn(`connection lost: ${summary(this.endOf(live.transport))}; it will be restarted on next use`);
    this.options.onToolsChanged?.(this.toolbox, this.config.name);
  }

  private noteFailure(lifetimeMs: number): void {
    this.quickFailures = lifetimeMs >= HEALTHY_LIFETIME_MS ? 1 : this.quickFailures + 1;
    // Two quick failures are retried at once (a one-off hiccup); from the third on: 0.5 s, 1 s, 2 s … up to the cap.
    const delay = this.quickFailures <= 2 ? 0 : Math.min(500 * 2 ** (this.quickFailures - 3), MAX_BACKOFF_MS);
    this.retryAt = Date.now() + delay;
  }

  /** What is known about how a connection ended, as fields. */
  private endOf(transport: Transport): ServerFailure {
    if (!(transport instanceof ChildProcessTransport)) return { kind: 'closed' };
    const exit = transport.exitInfo;
    const stderr = stderrOf(transport);
    if (!exit) return { kind: 'closed', ...stderr };
    if (exit.signal) return { kind: 'killed', signal: exit.signal, ...stderr };
    return { kind: 'exited', ...(exit.code !== null ? { exitCode: exit.code } : {}), ...stderr };
  }

  /** The same error with its message and details redacted (a wrapped fetch error repeats the whole URL). */
  private redactError(error: WorkbenchError): WorkbenchError {
    const message = this.redact(error.message);
    const details = error.details.map(this.redact);
    if (message === error.message && details.every((d, i) => d === error.details[i])) return error;
    return new WorkbenchError(error.code, message, { cause: error.cause, details });
  }

  private describeConnectError(error: unknown, transport: Transport, timedOut: boolean, timeoutMs: number): WorkbenchError {
    if (error instanceof WorkbenchError) return error;
    const code = (error as NodeJS.ErrnoException | undefined)?.code ?? (transport instanceof ChildProcessTransport ? transport.startError?.code : undefined);
    if (this.config.type === 'stdio' && (code === 'ENOENT' || code === 'EACCES')) {
      const what = code === 'ENOENT' ? 'was not found' : 'is not executable';
      return new WorkbenchError(
        'CONNECT_FAILED',
        // Only the program's base name: the command may have been expanded from a variable, and values are not shown.
        `${this.label} could not start: command "${basename(this.config.command)}" ${what}. Install it or fix "command" of this server in the config (PATH is searched; an absolute path always works).`,
        { cause: error, failure: { kind: code === 'ENOENT' ? 'command-not-found' : 'command-not-executable' } },
      );
    }
    if (timedOut) {
      return new WorkbenchError(
        'CONNECT_TIMEOUT',
        `${this.label} did not complete the MCP handshake within ${timeoutMs} ms and was stopped. ${this.config.type === 'stdio' ? 'Check that it speaks MCP on stdio' : 'Check that the URL is an MCP endpoint and reachable'}, or raise "connectTimeoutMs" for this server.`,
        { cause: error, failure: { kind: 'handshake-timeout', timeoutMs, ...stderrOf(transport) } },
      );
    }
    if (transport instanceof ChildProcessTransport) {
      // Whatever the SDK reported (connection closed, write after exit), a stdio server that failed its handshake is
      // explained by how its process ended.
      const failure = this.endOf(transport);
      return new WorkbenchError(
        'CONNECT_FAILED',
        `${this.label} failed to start: ${summary(failure)}\nFix its command, args or env in the config (\`mcp-workbench doctor\` checks every server); it is tried again on next use.`,
        { cause: error, failure },
      );
    }
    // Never the full URL: an expanded secret may sit in its query string.
    const where = this.config.type === 'stdio' ? '' : ` at ${describeUrl(this.config.url)}`;
    const status = httpStatusOf(error);
    const failure: ServerFailure = status !== undefined ? { kind: 'http-status', httpStatus: status } : { kind: 'unreachable' };
    return new WorkbenchError('CONNECT_FAILED', `${this.label}${where} could not be connected: ${errorMessage(error)}`, { cause: error, failure });
  }

  private describeCallError(error: unknown, live: Live, tool: string, timeout: number, cancellation: Cancellation | undefined): WorkbenchError {
    const what = `tool "${tool}" on ${this.label}`;
    // A child that has exited is known at once (its exit event), before the connection is reported closed.
    const exited = live.transport instanceof ChildProcessTransport && live.transport.exitInfo !== undefined;
    if (live.dead || exited) {
      const failure = this.endOf(live.transport);
      return new WorkbenchError(
        'SERVER_EXITED',
        `${what} failed: the server stopped (${summary(failure)}). It will be restarted on the next call; retry if the tool is safe to repeat.`,
        { cause: error, failure },
      );
    }
    if (error instanceof MalformedResultError) {
      return new WorkbenchError('INVALID_OUTPUT', `${what} failed: ${error.message}. Report this to the server's maintainers.`, { cause: error });
    }
    if (error instanceof McpError && error.code === ErrorCode.RequestTimeout && isLocalTimeout(error)) {
      return new WorkbenchError(
        'CALL_TIMEOUT',
        `${what} did not answer within ${timeout} ms and was cancelled. Retry, or raise "timeoutMs" for this server if the tool is expected to take longer.`,
        { cause: error },
      );
    }
    if (cancellation?.cancelled) {
      return new WorkbenchError('CALL_CANCELLED', `${what} was cancelled by the client`, { cause: error });
    }
    if ((error as { code?: unknown } | undefined)?.code === MESSAGE_TOO_LARGE_CODE) {
      return new WorkbenchError('MESSAGE_TOO_LARGE', `${what} failed: ${errorMessage(error).replace(/^MCP error -?\d+: /, '')}. Ask for less output (narrower arguments).`, {
        cause: error,
      });
    }
    if (error instanceof McpError) {
      return new WorkbenchError(
        'CALL_FAILED',
        `${what} returned an error (downstream JSON-RPC code ${error.code}): ${error.message.replace(/^MCP error -?\d+: /, '')}. Check the arguments against the tool's inputSchema (open_toolbox lists it), then retry.`,
        { cause: error },
      );
    }
    return new WorkbenchError('CALL_FAILED', `${what} failed: ${errorMessage(error)}`, { cause: error });
  }
}

/** The SDK marks its own timeouts with `data.timeout`; a downstream -32001 error is not ours. */
function isLocalTimeout(error: McpError): boolean {
  const data = error.data as { timeout?: unknown } | undefined;
  return typeof data?.timeout === 'number';
}

/**
 * Every page of tools/list (servers may paginate); none if the server has no tools capability. Parsed leniently:
 * one malformed tool (no name, or an inputSchema that is not an object) is skipped with a warning instead of making
 * the whole server unusable, and every other field is kept exactly as the server sent it.
 */
async function listAllTools(client: Client, log: Logger, label: string, timeout?: number): Promise<ToolList> {
  if (!client.getServerCapabilities()?.tools) return { tools: [], duplicates: [] };
  const tools: Tool[] = [];
  const names = new Set<string>();
  const duplicates = new Set<string>();
  const cursors = new Set<string>();
  let cursor: string | undefined;
  let page = 0;
  for (; page < MAX_TOOL_PAGES; page++) {
    const result = await client.request({ method: 'tools/list', params: cursor ? { cursor } : {} }, ResultSchema, timeout ? { timeout } : undefined);
    if (!Array.isArray(result.tools)) throw new Error('the server answered tools/list without a "tools" array');
    for (const tool of result.tools as unknown[]) {
      const problem = toolProblem(tool);
      if (problem) log.warn(`skipped a tool the server listed: ${problem}`);
      else if (names.has((tool as Tool).name)) duplicates.add((tool as Tool).name);
      else {
        names.add((tool as Tool).name);
        tools.push(tool as Tool);
      }
    }
    cursor = typeof result.nextCursor === 'string' && result.nextCursor !== '' ? result.nextCursor : undefined;
    if (!cursor) break;
    // A paginator that hands out a cursor it already gave would go round forever: stop at once and say so.
    if (cursors.has(cursor)) {
      log.warn(
        `${label} answered tools/list with a cursor it had already given (${quoteClientText(cursor, 40)}, page ${page + 1}); ` +
          `stopped reading its tool list there, with ${tools.length} distinct tools. Report this to the server's maintainers.`,
      );
      break;
    }
    cursors.add(cursor);
  }
  if (page === MAX_TOOL_PAGES) {
    log.warn(`${label} listed more than ${MAX_TOOL_PAGES} pages of tools; stopped reading there, with ${tools.length} distinct tools.`);
  }
  if (duplicates.size > 0) {
    const shown = [...duplicates].slice(0, 5).map((n) => quoteClientText(n, 64)).join(', ');
    log.warn(
      `${label} listed ${duplicates.size} tool name(s) more than once (${shown}${duplicates.size > 5 ? ', …' : ''}); each is counted ` +
        'once and only its first entry is used. Report this to the server\'s maintainers.',
    );
  }
  return { tools, duplicates: [...duplicates] };
}

/** A server's catalog: distinct tools in listed order, and the names it listed more than once. */
interface ToolList {
  tools: Tool[];
  duplicates: string[];
}

function toolProblem(tool: unknown): string | undefined {
  if (typeof tool !== 'object' || tool === null || Array.isArray(tool)) return 'an entry that is not an object';
  const { name, inputSchema } = tool as { name?: unknown; inputSchema?: unknown };
  if (typeof name !== 'string' || name === '') return 'an entry without a name';
  if (typeof inputSchema !== 'object' || inputSchema === null || Array.isArray(inputSchema)) {
    return `"${name}" has no inputSchema object`;
  }
  return undefined;
}

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import {
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  ErrorCode,
  ListRootsRequestSchema,
  LoggingMessageNotificationSchema,
  McpError,
  ToolListChangedNotificationSchema,
  type CallToolResult,
  type Tool,
} from '@modelcontextprotocol/sdk/types.js';
import { setTimeout as sleep } from 'node:timers/promises';
import type { ServerConfig } from '../config/types.js';
import { WorkbenchError, errorMessage } from '../errors.js';
import { redactingLogger, type Logger } from '../log.js';
import type { Redact } from '../shared/redact.js';
import { CallChannel } from './call-channel.js';
import type { CallOptions, ClientManagerOptions, RelayedMethod } from './client-manager.js';
import { listAllTools } from './list-tools.js';
import type { GroupTracker } from './orphan-reaper.js';
import { shuttingDown, summary } from './server-failure.js';
import { describeCallError, describeConnectError, endOf } from './slot-errors.js';
import { createSseTransport, createTransport, describeUrl, legacySseStatus } from './transports.js';

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
/**
 * The SDK's own request timeout (60 s by default) must never cut a connect short of `connectTimeoutMs`: ours fires
 * first and explains itself; the SDK's is only a backstop.
 */
const CONNECT_GRACE_MS = 5_000;

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

/** One configured server: its live connection (if any), the single in-flight connect, and crash bookkeeping. */
export class ServerSlot {
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
      describeError: (error) => this.redactError(describeCallError({ label: this.label, config: this.config }, error, live, tool, timeout, options.cancellation)),
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
      const described = this.redactError(describeConnectError({ label: this.label, config: this.config }, error, transport, timedOut, timeoutMs));
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
    this.log.warn(`connection lost: ${summary(endOf(live.transport))}; it will be restarted on next use`);
    this.options.onToolsChanged?.(this.toolbox, this.config.name);
  }

  private noteFailure(lifetimeMs: number): void {
    this.quickFailures = lifetimeMs >= HEALTHY_LIFETIME_MS ? 1 : this.quickFailures + 1;
    // Two quick failures are retried at once (a one-off hiccup); from the third on: 0.5 s, 1 s, 2 s … up to the cap.
    const delay = this.quickFailures <= 2 ? 0 : Math.min(500 * 2 ** (this.quickFailures - 3), MAX_BACKOFF_MS);
    this.retryAt = Date.now() + delay;
  }

  /** The same error with its message and details redacted (a wrapped fetch error repeats the whole URL). */
  private redactError(error: WorkbenchError): WorkbenchError {
    const message = this.redact(error.message);
    const details = error.details.map(this.redact);
    if (message === error.message && details.every((d, i) => d === error.details[i])) return error;
    return new WorkbenchError(error.code, message, { cause: error.cause, details });
  }

}

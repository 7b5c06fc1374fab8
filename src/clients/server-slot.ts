import { Client, SdkError, SdkErrorCode, type CallToolResult, type Tool } from '@modelcontextprotocol/client';
import { setTimeout as sleep } from 'node:timers/promises';
import type { ServerConfig } from '../config/types.js';
import { WorkbenchError } from '../errors.js';
import { redactingLogger, type Logger } from '../log.js';
import type { Redact } from '../shared/redact.js';
import type { ChannelCallOptions } from './call-channel.js';
import { OAuthConnector } from './oauth-connect.js';
import { capabilitiesKey } from './capabilities-key.js';
import { EraMemory } from './era-memory.js';
import { isInputRequired, untilComplete, type InputRelay } from './input-required.js';
import { InputDeadline, startClock, type CallClock } from './input-deadline.js';
import type { CallOptions, SlotOptions, ToolsChange } from './types.js';
import { callAsTask } from './task-call.js';
import { openLive, type Live } from './live-connection.js';
import type { GroupTracker } from './orphan-reaper.js';
import { summary } from './server-failure.js';
import { describeCallError, endOf, hasStopped, redactSlotError } from './slot-errors.js';
import { MODEL_START_STEPS } from './start-steps.js';
import { DEFAULT_CALL_TIMEOUT_MS, DEFAULT_CONNECT_TIMEOUT_MS, DEFAULT_MAX_TOTAL_CALL_MS } from './limits.js';
import { SlotDialer } from './slot-dialer.js';
import { SlotConnector, type Dialed } from './slot-connector.js';
import { SlotWatcher } from './slot-watcher.js';

export { DEFAULT_CALL_TIMEOUT_MS, DEFAULT_CONNECT_TIMEOUT_MS, DEFAULT_MAX_MESSAGE_BYTES, DEFAULT_MAX_TOTAL_CALL_MS } from './limits.js';

/** How often a server retired by a reload checks whether its last calls have finished. */
const RETIRE_POLL_MS = 100;
/** Where a slot stands (see ServerSlot.status). */
export type SlotStatus =
  | { state: 'connected' }
  | { state: 'starting'; since: number; lastFailure?: { error: WorkbenchError; at: number } | undefined }
  | { state: 'failed'; error: WorkbenchError }
  | { state: 'idle' };

/** One configured server: its live connection (if any), the single in-flight connect, and crash bookkeeping. */
export class ServerSlot {
  private live: Live | undefined;
  private pending: Promise<Live> | undefined;
  /** How the server is reached: transports, handshake and its fallbacks (slot-dialer.ts). */
  private readonly dialer: SlotDialer;
  /** Whether and how a connect is made: the backoff, the deadline, the failure (slot-connector.ts). */
  private readonly connector: SlotConnector;
  /** When the connect in flight began (undefined: none in flight). */
  private connectingSince: number | undefined;
  private closed = false;
  /** Set by {@link retire}: the slot is no longer in the config and is only finishing what was already asked of it. */
  private retiring = false;
  /**
   * Calls the channel does not count as in flight (see {@link retire}): waiting for the connect, or between the
   * rounds of a modern server's input requests. Counted only off the hot path.
   */
  private held = 0;
  /** Whether this slot has been connected before: its next connect is a restart. */
  private everConnected = false;
  /** What the live connection says unasked, and the re-reads of its tool list (slot-watcher.ts). */
  private readonly watcher: SlotWatcher;
  private readonly log: Logger;
  private readonly label: string;
  /** A remote server's OAuth sign-in (README "Remote servers behind OAuth"). */
  private readonly oauth: OAuthConnector | undefined;

  constructor(
    private readonly toolbox: string,
    readonly config: ServerConfig,
    private readonly options: SlotOptions,
    groups: GroupTracker,
    private readonly redact: Redact,
  ) {
    this.log = redactingLogger(options.log.child(`${toolbox}/${config.name}`), redact);
    this.label = `server "${config.name}" of toolbox "${toolbox}"`;
    // The authorization URL goes to the context's announcer (it holds no secret); the rest through this redacting log.
    this.oauth = config.type !== 'stdio' && options.oauth ? new OAuthConnector(toolbox, config, options.oauth, this.label, this.log) : undefined;
    this.dialer = new SlotDialer({ toolbox, config, options, groups, label: this.label, log: this.log, oauth: this.oauth }, () => this.closed);
    this.connector = new SlotConnector(
      {
        toolbox,
        config,
        label: this.label,
        log: this.log,
        eras: options.eras ?? new EraMemory(),
        warnings: options.connectWarnings,
        oauth: this.oauth,
        capabilities: () => capabilitiesKey(options.upstream?.capabilities()),
        redactError: (error) => this.redactError(error),
        steps: options.startSteps ?? MODEL_START_STEPS,
      },
      this.dialer,
      () => this.closed,
    );
    this.watcher = new SlotWatcher({ toolbox, config, options, label: this.label, log: this.log, isRetiring: () => this.retiring, toolsChanged: (why) => this.toolsChanged(why) });
  }

  /** A modern server's list whose ttlMs has passed: to be read again before it is shown (see refreshExpired). */
  get listExpired(): boolean {
    const live = this.live;
    return live !== undefined && !live.dead && live.ttlMs !== undefined && Date.now() - live.listedAt >= live.ttlMs;
  }

  /** Reads an expired list again (one refresh at a time); a failure keeps the list it had. */
  async refreshExpired(): Promise<void> {
    if (this.live && this.listExpired) await this.watcher.refresh(this.live, 'expired');
  }

  /** The ttlMs of the live list (a modern server's hint), for the catalog cache. */
  get ttlMs(): number | undefined {
    return this.live && !this.live.dead ? this.live.ttlMs : undefined;
  }

  /** A modern server's caching hint for its tool list (`private`: per-user, never persisted or shared). */
  get cacheScope(): 'public' | 'private' | undefined {
    return this.live && !this.live.dead ? this.live.cacheScope : undefined;
  }

  /** The protocol era and version the connected server speaks. */
  get era(): { era: 'legacy' | 'modern'; protocolVersion?: string } | undefined {
    const live = this.live;
    return live && !live.dead ? { era: live.era, ...(live.protocolVersion ? { protocolVersion: live.protocolVersion } : {}) } : undefined;
  }

  /** The user this connection serves, whose `${user:…}` its entry is started with (see user-places). */
  get user(): SlotOptions['user'] { return this.options.user; }

  get tools(): Tool[] | undefined {
    return this.live && !this.live.dead ? this.live.tools : undefined;
  }

  get listing(): Pick<Live, 'duplicates' | 'notes' | 'leftOut'> {
    return this.live && !this.live.dead ? this.live : { duplicates: [], notes: [], leftOut: new Map() };
  }

  ensure(): Promise<Live> {
    if (this.live && !this.live.dead) return Promise.resolve(this.live);
    if (!this.pending) {
      this.connectingSince = Date.now();
      this.pending = this.connect().finally(() => {
        this.pending = undefined;
        this.connectingSince = undefined;
      });
    }
    return this.pending;
  }

  /**
   * Where the server stands, for answers that must not wait for it: connected, starting (since when), failed (why;
   * until a connect succeeds), or idle (never asked for yet, or lost and not asked for since).
   */
  get status(): SlotStatus {
    if (this.live && !this.live.dead) return { state: 'connected' };
    if (this.connectingSince !== undefined) return { state: 'starting', since: this.connectingSince, lastFailure: this.connector.lastFailure };
    const failed = this.connector.lastError;
    if (failed) return { state: 'failed', error: failed };
    return { state: 'idle' };
  }

  /** The capabilities key of the live connection (see capabilitiesKey), if connected. */
  get capabilitiesKey(): string | undefined {
    return this.live && !this.live.dead ? this.live.capabilitiesKey : undefined;
  }

  call(tool: string, args: Record<string, unknown> | undefined, options: CallOptions): Promise<CallToolResult> {
    if (options.task) return this.holding(this.ensure().then((connected) => this.callTask(connected, tool, args, options)));
    // Connected: straight to the channel, without a promise turn for the connect that is not needed.
    const live = this.live;
    const result = live && !live.dead ? this.callOn(live, tool, args, options) : this.holding(this.ensure().then((connected) => this.callOn(connected, tool, args, options)));
    return this.oauth?.active ? result.catch((error: unknown) => this.afterRefusedCall(error, tool, args, options)) : result;
  }

  /** A call refused for its OAuth token (step-up, a revoked refresh): made once more after the sign-in it started. */
  private async afterRefusedCall(error: unknown, tool: string, args: Record<string, unknown> | undefined, options: CallOptions): Promise<CallToolResult> {
    const live = this.live;
    const waitMs = this.config.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS;
    if (!live || live.dead || !(await this.oauth!.recoverCall(error, live.transport, waitMs).catch((e: unknown) => Promise.reject(e instanceof WorkbenchError ? this.redactError(e) : e)))) throw error;
    return this.callOn(live, tool, args, options);
  }

  /**
   * The connected SDK client (connecting first if need be), for requests other than tools/call (resources, prompts,
   * completions, tasks). `use` runs while the slot counts as busy, so a reload does not close it mid-request.
   */
  withClient<T>(use: (client: Client) => Promise<T>): Promise<T> {
    return this.holding(this.ensure().then((live) => use(live.client)));
  }

  /** The capabilities the connected server declared (undefined while not connected). */
  get serverCapabilities(): ReturnType<Client['getServerCapabilities']> {
    return this.live && !this.live.dead ? this.live.client.getServerCapabilities() : undefined;
  }

  /** The live connection's prompt list as listed on connecting (see Handshaken); undefined when not connected. */
  get promptsOnConnect(): Live['promptsOnConnect'] | undefined {
    return this.live && !this.live.dead ? this.live.promptsOnConnect : undefined;
  }

  /** `work`, counted in {@link held} until it settles. */
  private holding<T>(work: Promise<T>): Promise<T> {
    this.held++;
    return work.finally(() => this.held--);
  }

  /**
   * Closes this slot once its calls in flight have settled (a reload removed or replaced it): at most
   * {@link RETIRE_POLL_MS} after the last one ends, then the process is stopped as by {@link close}. Polled rather
   * than counted per call, so the call path pays nothing for it. A connect in flight that no call waits for (a
   * background connect after open_toolbox answered from the cache) is stopped at once; one that calls wait for is
   * let finish, as those calls start right after it.
   */
  async retire(): Promise<void> {
    this.retiring = true;
    while (!this.closed && this.busy()) await sleep(RETIRE_POLL_MS, undefined, { ref: false });
    // The whole manager may have closed it meanwhile (shutdown).
    if (!this.closed) await this.close();
  }

  /** Whether anything asked of this slot is still under way (see {@link retire}). */
  private busy(): boolean {
    return this.held > 0 || (this.live !== undefined && !this.live.dead && this.live.calls.inFlight > 0);
  }

  /** A retired slot is no longer part of its toolbox: its connects, refreshes and losses change no catalog. */
  private toolsChanged(why: ToolsChange): void {
    if (!this.retiring) this.options.onToolsChanged?.(this.toolbox, this.config.name, why);
  }

  private callOn(live: Live, tool: string, args: Record<string, unknown> | undefined, options: CallOptions): Promise<CallToolResult> {
    const timeout = this.config.timeoutMs ?? DEFAULT_CALL_TIMEOUT_MS;
    const channel: ChannelCallOptions = {
      cancellation: options.cancellation,
      onprogress: options.onprogress,
      meta: options.meta,
      timeoutMs: timeout,
      maxTotalMs: Math.max(timeout, DEFAULT_MAX_TOTAL_CALL_MS),
      describeError: (error) => this.redactError(describeCallError({ label: this.label, config: this.config }, error, live, tool, timeout, options.cancellation)),
    };
    // The result is returned as it came; the output-schema check is the caller's to make.
    if (live.era === 'legacy') return live.calls.call(tool, args, channel) as Promise<CallToolResult>;
    // The call's clock: if the server asks for input, its rounds are bounded by the same timeout (see InputDeadline).
    const { clock, onprogress } = startClock(channel.onprogress);
    const first = live.calls.call(tool, args, { ...channel, onprogress, inputResponses: options.inputResponses, requestState: options.requestState });
    return first.then((result) =>
      options.passInputRequired || !isInputRequired(result) ? (result as CallToolResult) : this.fulfil(live, tool, args, options, channel, result, clock),
    );
  }

  /** A task-only tool of a handshake-era server, as a task waited for (see callAsTask); a modern server's as usual. */
  private callTask(live: Live, tool: string, args: Record<string, unknown> | undefined, options: CallOptions): Promise<CallToolResult> {
    if (live.era === 'modern') return this.callOn(live, tool, args, options);
    const timeoutMs = this.config.timeoutMs ?? DEFAULT_CALL_TIMEOUT_MS;
    const what = `tool "${tool}" on ${this.label}`;
    const task = { cancellation: options.cancellation, onprogress: options.onprogress, meta: options.meta, timeoutMs, maxTotalMs: Math.max(timeoutMs, DEFAULT_MAX_TOTAL_CALL_MS), what };
    return callAsTask(live.client, tool, args, task).catch((error: unknown) => {
      // A server that stopped mid-task is told as for any call (SERVER_EXITED, its exit, retryable), not "Not connected".
      const stopped = hasStopped(live) && !(error instanceof WorkbenchError && error.code === 'CALL_CANCELLED');
      const told = stopped ? describeCallError({ label: this.label, config: this.config }, error, live, tool, timeoutMs, options.cancellation) : error;
      return Promise.reject(told instanceof WorkbenchError ? this.redactError(told) : told);
    });
  }

  /**
   * Answers a modern server's input requests through the relay and calls again, until it completes (bounded in rounds,
   * and in time by the call's timeout: see InputDeadline, whose expiry fails the call with CALL_TIMEOUT).
   */
  private fulfil(live: Live, tool: string, args: Record<string, unknown> | undefined, options: CallOptions, channel: ChannelCallOptions, result: Record<string, unknown>, clock: CallClock): Promise<CallToolResult> {
    const what = `tool "${tool}" on ${this.label}`;
    const upstream = this.options.upstream;
    const relay: InputRelay | undefined = options.call
      ? (request, signal) => options.call!.request(request, signal)
      : upstream && ((request, signal) => upstream.request(this.toolbox, this.config.name, request, signal));
    if (!relay) return Promise.reject(new WorkbenchError('CALL_FAILED', `${what} asked the client for input, but no client is connected to answer it`));
    const deadline = new InputDeadline(clock, channel.timeoutMs, channel.maxTotalMs, options.cancellation);
    const retryChannel = deadline.retryOptions(channel);
    const retry = (inputResponses: Record<string, unknown>, requestState: string | undefined) =>
      live.calls.call(tool, args, { ...retryChannel, inputResponses, ...(requestState !== undefined ? { requestState } : {}) });
    // Between rounds no call of the channel is in flight: held, so a reload does not close the server mid-call.
    return this.holding(untilComplete(result, retry, relay, deadline.cancellation, what).finally(() => deadline.dispose())).then(
      (complete) => complete as CallToolResult,
      (error: unknown) => {
        const told = deadline.expired ? describeCallError({ label: this.label, config: this.config }, deadline.cancellation.reason, live, tool, channel.timeoutMs, options.cancellation) : error;
        return Promise.reject(told instanceof WorkbenchError ? this.redactError(told) : told);
      },
    );
  }

  async close(): Promise<void> {
    this.closed = true;
    this.watcher.close();
    const transports = [...this.dialer.starting];
    if (this.live) {
      this.live.dead = true;
      this.live.calls.close(new SdkError(SdkErrorCode.ConnectionClosed, 'the workbench is shutting down'));
      void this.live.subscription?.close().catch(() => {});
      transports.push(this.live.transport);
    }
    await Promise.allSettled([...transports.map((t) => t.close()), this.oauth?.close()]);
  }

  private connect(): Promise<Live> {
    return this.connector.connect((dialed) => {
      const restart = this.everConnected;
      const live = this.goLive(dialed);
      const ms = Date.now() - dialed.startedAt;
      const tools = dialed.list.tools.length;
      const line = `connected in ${ms} ms, ${tools} tools (${live.era} protocol${live.protocolVersion ? ` ${live.protocolVersion}` : ''})`;
      // Over --http every session starts its own connections: one more start of a server that starts fine is debug.
      // Its first start, one after a failure, a restart after a loss and one that took over half its limit are not.
      const slow = ms >= (this.config.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS) / 2;
      const told = !this.options.quietStarts || dialed.news || restart || slow;
      const fields = { duration_ms: ms, tools, era: live.era };
      if (told) this.log.info(line, fields);
      else this.log.debug(line, fields);
      this.toolsChanged('connected');
      return live;
    });
  }

  /** A connected client becomes this slot's live connection (see openLive): its notices and its loss watched. */
  private goLive(dialed: Dialed): Live {
    const live = openLive(dialed, this.options, this.config.type === 'http');
    this.live = live;
    dialed.client.onclose = () => this.onClosed(live);
    this.watcher.watch(live);
    if (this.everConnected) this.options.onRestarted?.(this.toolbox, this.config.name);
    this.everConnected = true;
    return live;
  }

  /** Tells the server the client's roots changed (only if it was told the client has roots). */
  notifyRootsChanged(): void {
    const live = this.live;
    if (live && !live.dead && this.options.upstream?.capabilities().roots) {
      void live.client.sendRootsListChanged().catch(() => {});
    }
  }

  private onClosed(live: Live): void {
    if (live.dead) return;
    live.dead = true;
    live.calls.close(new SdkError(SdkErrorCode.ConnectionClosed, 'Connection closed'));
    if (this.live === live) this.live = undefined;
    // The process may be gone but what it started may not: end its process group and known descendants too.
    void live.transport.close().catch(() => {});
    if (this.closed) return;
    this.connector.noteFailure(Date.now() - live.startedAt);
    this.log.warn(`connection lost: ${summary(endOf(live.transport))}; it will be restarted on next use`);
    this.toolsChanged('lost');
  }

  /** The error as it may leave the slot: placed at this toolbox/server and redacted (see redactSlotError). */
  private redactError(error: WorkbenchError): WorkbenchError {
    return redactSlotError(error, { toolbox: this.toolbox, server: this.config.name }, this.redact);
  }
}

import type { Client, Transport } from '@modelcontextprotocol/client';
import { serverProblemError } from '../config/server-problems.js';
import type { ServerConfig } from '../config/types.js';
import { WorkbenchError, errorMessage } from '../errors.js';
import type { Logger } from '../log.js';
import { ConnectWarnings } from './connect-warnings.js';
import { serverCacheKey, type EraMemory, type EraVerdict } from './era-memory.js';
import { DEFAULT_CONNECT_TIMEOUT_MS } from './limits.js';
import type { ToolList } from './list-tools.js';
import type { FeatureList } from './server-features.js';
import type { OAuthConnector } from './oauth-connect.js';
import { asSentence } from '../shared/sentence.js';
import { shuttingDown } from './server-failure.js';
import { describeConnectError } from './slot-errors.js';
import type { StartSteps } from './start-steps.js';
import type { ConnectAttempt, SlotDialer } from './slot-dialer.js';

/** Reconnect backoff after repeated quick failures: 0, 0, 0.5 s, 1 s, 2 s … capped here. */
const MAX_BACKOFF_MS = 10_000;
/** A connection that lived this long before dying is treated as healthy: its crash starts the backoff afresh. */
const HEALTHY_LIFETIME_MS = 30_000;

/** What a connector knows of its slot. */
export interface ConnectorSlot {
  toolbox: string;
  config: ServerConfig;
  label: string;
  log: Logger;
  eras: EraMemory;
  /** The causes warned about, shared by every session's connection to this server (see causeOf); else per slot. */
  warnings: ConnectWarnings | undefined;
  oauth: OAuthConnector | undefined;
  /** The capabilities key of the upstream client at the time of the connect (see capabilitiesKey). */
  capabilities(): string;
  /** The error as it may leave the slot (placed, redacted). */
  redactError(error: WorkbenchError): WorkbenchError;
  /** What a failed start tells its reader to do next (SlotOptions.startSteps). */
  steps: StartSteps;
}

/** A handshake that succeeded: what the slot makes its live connection of. */
export interface Dialed {
  client: Client;
  transport: Transport;
  list: ToolList;
  /** The prompt list as listed on connecting (see Handshaken). */
  prompts: Promise<FeatureList | undefined>;
  capabilities: string;
  /** When the connect began (`Date.now()`). */
  startedAt: number;
  /** Whether this start is news for the log (see ConnectWarnings.started): else the server has started fine before. */
  news: boolean;
}

/**
 * One connect of a slot from start to end: whether it may be tried now (an entry that cannot start, the backoff after
 * quick failures), the connect deadline around the dialer's handshake, the era remembered on success, and on failure
 * the described error, logged and counted towards the backoff. The slot (server-slot.ts) decides when to connect and
 * keeps the connection.
 */
export class SlotConnector {
  private quickFailures = 0;
  private retryAt = 0;
  /** Why the last connect attempt failed, while no connect has succeeded since. */
  private lastConnectError: WorkbenchError | undefined;
  private lastConnectFailedAt = 0;
  private readonly warnings: ConnectWarnings;

  constructor(
    private readonly slot: ConnectorSlot,
    private readonly dialer: SlotDialer,
    private readonly isClosed: () => boolean,
  ) {
    this.warnings = slot.warnings ?? new ConnectWarnings();
  }

  /** Why the last connect failed, until one succeeds. */
  get lastError(): WorkbenchError | undefined {
    return this.lastConnectError;
  }

  /** The last failed connect and when it failed, until one succeeds (a start under way is shown with it). */
  get lastFailure(): { error: WorkbenchError; at: number } | undefined {
    return this.lastConnectError && { error: this.lastConnectError, at: this.lastConnectFailedAt };
  }

  /**
   * Connects within `connectTimeoutMs` and hands the result to `adopt` while its transport still counts as starting
   * (so a close meanwhile ends it). @throws WorkbenchError the described failure (redacted), or the shutdown error
   *   when the slot closed during the connect.
   */
  async connect<T>(adopt: (dialed: Dialed) => T): Promise<T> {
    await this.readyToConnect();
    const { toolbox, config } = this.slot;
    const timeoutMs = config.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS;
    const remote = config.type === 'stdio' ? undefined : config;
    // What earlier connects learned: connect without the era probe (an `http` entry found to be legacy SSE: SSE).
    const prior: EraVerdict | undefined = remote && this.dialer.legacySse ? { kind: 'legacy' } : await this.slot.eras.get(toolbox, config);
    await this.slot.oauth?.open();
    const attempt: ConnectAttempt = { transport: this.dialer.newTransport(), timedOut: false };
    this.dialer.starting.add(attempt.transport);
    // Closing the transport ends most stuck connects; one that does not settle on close (an SSE stream that never sends
    // its `endpoint` event) is ended by the same timer, so a connect never outlives connectTimeoutMs.
    let expire!: (error: Error) => void;
    const expired = new Promise<never>((_, reject) => (expire = reject));
    expired.catch(() => {});
    const timer = setTimeout(() => {
      attempt.timedOut = true;
      void attempt.transport.close();
      expire(new Error('timed out'));
    }, timeoutMs);
    const startedAt = Date.now();
    const capabilities = this.slot.capabilities();
    try {
      const { client, list, prompts } = await Promise.race([this.dialer.handshake(attempt, prior, timeoutMs), expired]);
      if (attempt.timedOut) throw new Error('timed out');
      if (this.isClosed()) throw shuttingDown(this.slot.label);
      const news = this.succeeded(client);
      return adopt({ client, transport: attempt.transport, list, prompts, capabilities, startedAt, news });
    } catch (error) {
      clearTimeout(timer);
      throw await this.connectFailed(error, attempt, timeoutMs);
    } finally {
      clearTimeout(timer);
      this.dialer.starting.delete(attempt.transport);
    }
  }

  /** A connection that lived `lifetimeMs` was lost: counted towards the backoff (afresh when it lived long). */
  noteFailure(lifetimeMs: number): void {
    this.quickFailures = lifetimeMs >= HEALTHY_LIFETIME_MS ? 1 : this.quickFailures + 1;
    // Two quick failures are retried at once (a one-off hiccup); from the third on: 0.5 s, 1 s, 2 s … up to the cap.
    const delay = this.quickFailures <= 2 ? 0 : Math.min(500 * 2 ** (this.quickFailures - 3), MAX_BACKOFF_MS);
    this.retryAt = Date.now() + delay;
  }

  /**
   * Throws at once for an entry that cannot start as written or a server still in its backoff after failing to start;
   * waits out the backoff of a server that crashed after working (the caller wants it back).
   */
  private async readyToConnect(): Promise<void> {
    const { label, config, log } = this.slot;
    if (this.isClosed()) throw this.slot.redactError(shuttingDown(label));
    // An entry that cannot start as written (unset variable, malformed URL) fails at once, every time, spawning nothing.
    if (config.problems) throw this.slot.redactError(serverProblemError(label, config.problems, this.slot.steps.fixConfig(this.slot.toolbox)));
    const wait = this.retryAt - Date.now();
    if (wait > 0 && this.lastConnectError) {
      // A server that keeps failing to start must not stall every open_toolbox of its toolbox: answer at once.
      const last = this.lastConnectError;
      const note = `Not retried yet: it failed ${this.quickFailures} times in a row; next attempt in ${Math.ceil(wait / 1000)} s.`;
      throw new WorkbenchError(last.code, `${asSentence(last.message)}${last.message.includes('\n') ? '\n' : ' '}${note}`, {
        failure: last.failure,
        hint: last.hint,
        details: last.details,
        ...last.site,
      });
    }
    if (wait > 0) {
      log.info(`waiting ${wait} ms before reconnecting (it failed ${this.quickFailures} times in a row)`);
      await new Promise((r) => setTimeout(r, wait));
    }
  }

  /**
   * The era the server turned out to speak is remembered for the next connect, and the last failure forgotten. Returns
   * whether the start is news (see ConnectWarnings.started).
   */
  private succeeded(client: Client): boolean {
    const discover = client.getDiscoverResult();
    const modern = client.getProtocolEra() === 'modern';
    if (!this.dialer.legacySse) this.slot.eras.set(this.slot.toolbox, this.slot.config, modern && discover ? { kind: 'modern', discover } : { kind: 'legacy' });
    this.lastConnectError = undefined;
    return this.warnings.started(this.server, serverCacheKey(this.slot.toolbox, this.slot.config));
  }

  /** The server as the shared record and the log's scope name it: `toolbox/server`. */
  private get server(): string {
    return `${this.slot.toolbox}/${this.slot.config.name}`;
  }

  /** What a failed connect throws, after ending its transport; logged and counted towards the backoff unless closing. */
  private async connectFailed(error: unknown, attempt: ConnectAttempt, timeoutMs: number): Promise<WorkbenchError> {
    const { label, config, log } = this.slot;
    if (this.isClosed()) {
      // Closed during its handshake (shutdown, a client that left, a reload): the process ended because we ended
      // it, which is no failure to report — nor one to count towards the backoff.
      await attempt.transport.close().catch(() => {});
      log.debug(`connect stopped (closing): ${errorMessage(error)}`);
      return this.slot.redactError(shuttingDown(label));
    }
    // Decide the cause before closing: ending a process tree takes a moment, and the connect timer must not fire
    // meanwhile and turn "exited with code 3" into "timed out".
    const described = this.slot.redactError(describeConnectError({ label, config, toolbox: this.slot.toolbox, steps: this.slot.steps }, error, attempt.transport, attempt.timedOut, timeoutMs));
    await attempt.transport.close().catch(() => {});
    this.noteFailure(0);
    this.lastConnectError = described;
    this.lastConnectFailedAt = Date.now();
    // Every open and call tries a server that cannot start again: warn once per cause (a missing command fails the
    // same way each time), again when the cause changes or after the server has started in between — once per
    // process, however many sessions have connections of their own to it.
    if (this.warnings.news(this.server, causeOf(described))) log.warn(described.toDisplayString());
    else log.debug(`failed again, as warned: ${described.toDisplayString()}`);
    return described;
  }
}

/** What makes two failed connects the same cause, from the error's fields (never its text: a stderr tail varies). */
function causeOf(error: WorkbenchError): string {
  const f = error.failure;
  return JSON.stringify([error.code, f?.kind, f?.exitCode, f?.signal, f?.httpStatus, f?.timeoutMs]);
}

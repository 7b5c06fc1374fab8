import type { Client, Transport } from '@modelcontextprotocol/client';
import type { ServerConfig } from '../config/types.js';
import type { LogFields, Logger } from '../log.js';
import { nextAttempt, type ConnectState } from './connect-plan.js';
import { createDownstreamClient } from './downstream-client.js';
import type { EraVerdict } from './era-memory.js';
import { DEFAULT_CONNECT_TIMEOUT_MS, DEFAULT_MAX_MESSAGE_BYTES } from './limits.js';
import { guardListHints } from './list-hints.js';
import { listAllTools, type ToolList } from './list-tools.js';
import { listEveryPage, type FeatureList } from './server-features.js';
import type { OAuthConnector } from './oauth-connect.js';
import type { GroupTracker } from './orphan-reaper.js';
import { createSseTransport, createTransport, describeUrl } from './transports.js';
import type { SlotOptions } from './types.js';
import { forUser } from './user-places.js';

/** How long the prompt listing made on connecting may take (it is not waited for: see Handshaken). */
const PROMPTS_TIMEOUT_MS = 60_000;

/**
 * A connect's outcome: the client, its tool list, and its prompt list as listed on connecting — asked for before the
 * connect resolves, so before any call of a session can change it (README "Catalog cache": what a session changed
 * stays its own). Undefined when the server offers none or the listing failed.
 */
export interface Handshaken {
  client: Client;
  list: ToolList;
  prompts: Promise<FeatureList | undefined>;
}

/**
 * The SDK's own request timeout (60 s by default) must never cut a connect short of `connectTimeoutMs`: ours fires
 * first and explains itself; the SDK's is only a backstop.
 */
export const CONNECT_GRACE_MS = 5_000;
/**
 * How long a stdio server may stay silent on the era probe before it is taken for a legacy server that ignores
 * requests before `initialize` (a modern server answers `server/discover` at once).
 */
const PROBE_TIMEOUT_MS = 3_000;

/** The transport a connect is on now (replaced between attempts) and whether its deadline passed. */
export interface ConnectAttempt {
  transport: Transport;
  timedOut: boolean;
}

/** What a dialer knows of its slot. */
export interface DialerSlot {
  toolbox: string;
  config: ServerConfig;
  options: SlotOptions;
  groups: GroupTracker;
  label: string;
  log: Logger;
  oauth: OAuthConnector | undefined;
}

/**
 * How one server is reached: the transport for each attempt (a process, Streamable HTTP, or SSE once an `http` entry
 * turned out to be a legacy SSE server), and the handshake with its fallbacks (era probe, remembered era, SSE, a
 * sign-in). The slot (server-slot.ts) decides when to connect, times it out and keeps what it yields.
 */
export class SlotDialer {
  /** An `http` entry that answered like a legacy SSE server: it is connected over SSE from then on. */
  legacySse = false;
  /** Transports being connected right now, so the slot's close() can end them too. */
  readonly starting = new Set<Transport>();
  /** The malformed caching hints the server's lists were found with, each said once for the slot's life. */
  private readonly hintFaults = new Set<string>();

  constructor(
    private readonly slot: DialerSlot,
    private readonly isClosed: () => boolean,
  ) {}

  /**
   * Connects on `attempt.transport`, trying what {@link nextAttempt} says after each failure (another era, SSE, a new
   * process) on a fresh transport, until one succeeds or nothing is left to try (it throws then).
   */
  async handshake(attempt: ConnectAttempt, first: EraVerdict | undefined, timeoutMs: number): Promise<Handshaken> {
    const remote = this.slot.config.type === 'stdio' ? undefined : this.slot.config;
    const state: ConnectState = { stdio: !remote, http: remote?.type === 'http', sse: this.legacySse, prior: first, respawned: false, reprobed: false };
    let prior = first;
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      try {
        return await this.attempt(attempt.transport, prior, timeoutMs);
      } catch (error) {
        if (attempt.timedOut || this.isClosed()) throw error;
        if (await this.slot.oauth?.recover(error, attempt.transport, deadline - Date.now())) {
          await this.replaceTransport(attempt);
          continue;
        }
        if (state.sseStatus !== undefined) this.legacySse = false;
        const next = nextAttempt(error, state); // throws when nothing is left to try
        prior = next.prior;
        if (next.sse !== undefined) this.legacySse = true;
        const sse = next.sse !== undefined ? { transport: 'sse', http_status: next.sse } : undefined;
        this.note(remote && sse ? `${describeUrl(remote.url)} ${next.note}` : next.note, sse);
        await this.replaceTransport(attempt);
      }
    }
  }

  /**
   * Tells a fallback the connect took. One of many sessions' connections (see SlotOptions.quietStarts) tells it at info
   * once per process — a server that fails to start takes it on every session's attempt — and at debug after that.
   */
  private note(text: string, fields: LogFields | undefined): void {
    const { options, toolbox, config, log } = this.slot;
    const news = !options.quietStarts || (options.connectWarnings?.noted(`${toolbox}/${config.name}`, text) ?? true);
    if (news) log.info(text, fields);
    else log.debug(text, fields);
  }

  /** Ends the attempt's transport and puts a fresh one in its place. */
  private async replaceTransport(attempt: ConnectAttempt): Promise<void> {
    this.starting.delete(attempt.transport);
    await attempt.transport.close().catch(() => {});
    attempt.transport = this.newTransport();
    this.starting.add(attempt.transport);
  }

  /** The transport for the next connect attempt (SSE for an `http` entry already found to be legacy SSE). */
  newTransport(): Transport {
    const config = forUser(this.slot.config, this.slot.options.user);
    const remote = config.type === 'stdio' ? undefined : config;
    const oauth = this.slot.oauth && { authProvider: this.slot.oauth.authProvider, watch: this.slot.oauth.watch };
    if (remote && this.legacySse) return createSseTransport(remote, this.slot.options.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES, this.slot.log, oauth);
    return createTransport(config, {
      ...(oauth && { oauth }),
      workbenchEnv: this.slot.options.env,
      maxMessageBytes: this.slot.options.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES,
      noiseWindowMs: this.slot.options.noiseWindowMs,
      log: this.slot.log,
      groups: this.slot.groups,
      onNoise: this.slot.options.onStdoutNoise && ((line) => this.slot.options.onStdoutNoise!(this.slot.toolbox, this.slot.config.name, line)),
    });
  }

  /**
   * One connect on `transport`: with `prior`, in that era without a probe; else the SDK probes (`server/discover`,
   * in place on our stdio transport: one process) and falls back to `initialize`. Then the tool list, which also
   * checks a remembered modern verdict: a legacy server's list has no caching hint. The prompt list is asked for
   * beside it and not waited for (see {@link Handshaken}).
   */
  private async attempt(transport: Transport, prior: EraVerdict | undefined, timeoutMs: number): Promise<Handshaken> {
    const client = this.createClient();
    await client.connect(transport, { timeout: timeoutMs + CONNECT_GRACE_MS, ...(prior ? { prior } : {}) });
    const modern = client.getProtocolEra() === 'modern';
    if (modern) guardListHints(transport, this.slot.log, this.slot.label, this.hintFaults);
    const prompts = listEveryPage(client, 'prompts/list', PROMPTS_TIMEOUT_MS).catch((error: unknown) => {
      this.slot.log.debug(`${this.slot.label}: its prompts could not be listed on connecting: ${error instanceof Error ? error.message : String(error)}`);
      return undefined;
    });
    const list = await listAllTools(client, this.slot.log, this.slot.label, timeoutMs + CONNECT_GRACE_MS, modern);
    return { client, list, prompts };
  }

  private createClient(): Client {
    return createDownstreamClient({
      clientInfo: this.slot.options.clientInfo,
      upstream: this.slot.options.upstream,
      // Only a stdio server can stay silent on the probe (a legacy one ignores requests before initialize); a remote
      // legacy server answers it with an HTTP error at once, so a slow remote server gets its whole connect timeout.
      probeTimeoutMs:
        this.slot.config.type === 'stdio'
          ? Math.min(PROBE_TIMEOUT_MS, this.slot.config.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS)
          : (this.slot.config.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS),
      relayTo: { toolbox: this.slot.toolbox, server: this.slot.config.name },
      log: this.slot.log,
    });
  }
}

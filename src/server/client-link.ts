import { ProtocolError, ProtocolErrorCode, type ClientCapabilities, type RequestId, type Server } from '@modelcontextprotocol/server';
import type { ServerNotice } from '../clients/feature-notices.js';
import type { UpstreamSession } from '../core/workbench.js';

/** Relayed requests may wait for a human (elicitation) or a model (sampling): allow long, but not forever. */
export const RELAY_TIMEOUT_MS = 10 * 60_000;

type Ask = { method: string; params?: Record<string, unknown> };

/**
 * The way back from a surface to its client: what the workbench's downstream side may ask of it outside of a call
 * (requests, log messages, resource and prompt notices) and what it declared it can do. A handshake-era client is
 * reached through its one legacy instance; a client of MCP 2026-07-28 cannot be sent anything outside of a call, so
 * a request then fails with a protocol error and a log message goes nowhere.
 */
export class ClientLink {
  /** The legacy instance that reaches this client (requests, log messages); none for modern clients. */
  legacy: Server | undefined;
  /** A modern client's capabilities, as its latest request declared them. */
  declared: ClientCapabilities | undefined;
  private readonly notices = new Set<(notice: ServerNotice) => void>();

  /** What the workbench is given for this client's session (Workbench.openSession). */
  readonly session: UpstreamSession = {
    capabilities: () => this.legacy?.getClientCapabilities() ?? this.declared,
    request: (request, signal) => this.ask(request, signal),
    reachableOutsideCalls: () => this.legacy !== undefined,
    // With the session id, the SDK applies this session's logging/setLevel (it keeps levels per session).
    log: (params) => {
      const legacy = this.legacy;
      void legacy?.sendLoggingMessage(params, legacy.transport?.sessionId).catch(() => {});
    },
    notify: (notice) => {
      for (const listener of this.notices) listener(notice);
    },
  };

  /**
   * A request to the client, on the stream of `relatedRequestId` if given. Rejects with a ProtocolError
   * (InvalidRequest) when the client is of MCP 2026-07-28 and so has no way to be asked.
   */
  ask(request: Ask, signal: AbortSignal, relatedRequestId?: RequestId): Promise<Record<string, unknown>> {
    if (this.legacy) return askLegacy(this.legacy, request, signal, relatedRequestId);
    return Promise.reject(
      new ProtocolError(
        ProtocolErrorCode.InvalidRequest,
        `the client speaks MCP 2026-07-28, which cannot be sent ${request.method} outside of a call; only a server's requests during a use_tool call reach it`,
      ),
    );
  }

  /** Calls the listener, in the order listeners were added, for every notice the workbench sends; returns the unsubscribe. */
  onNotice(listener: (notice: ServerNotice) => void): () => void {
    this.notices.add(listener);
    return () => void this.notices.delete(listener);
  }

  /** Forgets every notice listener (the surface closed). */
  clear(): void {
    this.notices.clear();
  }
}

/** A request to a handshake-era client (relayed sampling, elicitation, roots), on the stream of `relatedRequestId` if given. */
function askLegacy(server: Server, request: Ask, signal: AbortSignal, relatedRequestId?: RequestId): Promise<Record<string, unknown>> {
  return server.request(request as never, { signal, timeout: RELAY_TIMEOUT_MS, resetTimeoutOnProgress: true, relatedRequestId }) as Promise<Record<string, unknown>>;
}

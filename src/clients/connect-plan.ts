import { ProtocolErrorCode, SdkError, SdkErrorCode } from '@modelcontextprotocol/client';
import { errorMessage } from '../errors.js';
import type { EraVerdict } from './era-memory.js';
import { legacySseStatus } from './transports.js';

/** Where a server's connect stands: the era tried, and which second chances were already used. */
export interface ConnectState {
  stdio: boolean;
  /** An `http` entry (which may turn out to be a legacy SSE server). */
  http: boolean;
  /** Connecting over legacy SSE already (an `http` entry found to be one earlier). */
  sse: boolean;
  prior: EraVerdict | undefined;
  respawned: boolean;
  reprobed: boolean;
  /** The HTTP status that sent this connect to SSE. */
  sseStatus?: number;
}

/**
 * What to try after a failed connect attempt (each at most once per connect), or throws when nothing is left:
 * - a stdio server that exited on the era probe is a legacy server that ends on any request before `initialize`:
 *   start it again, legacy;
 * - a remembered era that did not connect is stale (the server was upgraded or downgraded): probe once more — for a
 *   remembered legacy server only when it refused the handshake's protocol version (a server that crashes is not
 *   started twice for nothing);
 * - an `http` entry whose initialize POST got a 4xx is a legacy HTTP+SSE server (the MCP spec's
 *   backwards-compatibility path; the modern probe before it is the SDK's, which falls back to initialize itself).
 */
export function nextAttempt(error: unknown, state: ConnectState): { prior: EraVerdict | undefined; sse?: number; note: string } {
  if (state.sseStatus !== undefined) {
    throw new Error(`Streamable HTTP was refused (HTTP ${state.sseStatus}) and the legacy SSE transport failed too: ${errorMessage(error)}`, { cause: error });
  }
  if (!state.respawned && state.stdio && state.prior?.kind !== 'legacy' && error instanceof SdkError && error.code === SdkErrorCode.EraNegotiationFailed) {
    state.respawned = true;
    return { prior: (state.prior = { kind: 'legacy' }), note: 'exited on the protocol-era probe; starting it again as a legacy (initialize) server' };
  }
  const refusedVersion = (error as { code?: unknown } | undefined)?.code === ProtocolErrorCode.UnsupportedProtocolVersion;
  if (!state.reprobed && state.prior !== undefined && !state.sse && (state.prior.kind === 'modern' || refusedVersion)) {
    state.reprobed = true;
    const note = `did not connect as the ${state.prior.kind} server it was last time (${errorMessage(error)}); probing its protocol era again`;
    return { prior: (state.prior = undefined), note };
  }
  const status = legacySseStatus(error);
  if (!state.http || state.sse || status === undefined) throw error;
  state.sseStatus = status;
  state.sse = true;
  return { prior: (state.prior = { kind: 'legacy' }), sse: status, note: `answered HTTP ${status} to Streamable HTTP; using the legacy SSE transport` };
}

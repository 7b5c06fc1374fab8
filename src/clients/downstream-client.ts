import { CLIENT_CAPABILITIES_META_KEY, CLIENT_INFO_META_KEY, Client, PROTOCOL_VERSION_META_KEY, type ClientCapabilities } from '@modelcontextprotocol/client';
import type { Logger } from '../log.js';
import type { RelayedMethod, UpstreamRelay } from './types.js';

export interface DownstreamClientOptions {
  clientInfo: { name: string; version: string };
  upstream: UpstreamRelay | undefined;
  /** How long a stdio server may stay silent on the era probe before it is taken for a legacy server. */
  probeTimeoutMs: number;
  /** Who the relayed requests come from. */
  relayTo: { toolbox: string; server: string };
  log: Logger;
}

/**
 * An SDK client for one downstream connection, declaring (and relaying) exactly the relayable capabilities of the
 * upstream client. It negotiates the protocol era itself (`auto`: `server/discover` first, `initialize` on a
 * non-modern answer, or the era given to `connect` as `prior`). Legacy server → client requests reach the upstream
 * relay through its handlers; a modern server's input requests never do: tools/call goes through the CallChannel,
 * which fulfils them per call (ServerSlot), so they reach the upstream client of that very call.
 */
export function createDownstreamClient(options: DownstreamClientOptions): Client {
  const { upstream, relayTo, log } = options;
  // The same JSON the upstream client declared (typed by the upstream faces as SDK v1: `object` where v2 says JSON).
  const capabilities = (upstream?.capabilities() ?? {}) as ClientCapabilities;
  const client = new Client(options.clientInfo, {
    capabilities,
    versionNegotiation: { mode: 'auto', probe: { timeoutMs: options.probeTimeoutMs } },
  });
  if (!upstream) return client;
  const relay = (method: RelayedMethod) => (request: { params?: Record<string, unknown> }, ctx: { mcpReq: { signal: AbortSignal } }) => {
    log.debug(`relaying ${method} to the client`);
    return upstream.request(relayTo.toolbox, relayTo.server, { method, params: request.params }, ctx.mcpReq.signal);
  };
  if (capabilities.sampling) client.setRequestHandler('sampling/createMessage', relay('sampling/createMessage') as never);
  if (capabilities.elicitation) client.setRequestHandler('elicitation/create', relay('elicitation/create') as never);
  if (capabilities.roots) client.setRequestHandler('roots/list', relay('roots/list') as never);
  return client;
}

/**
 * The `_meta` envelope a modern (2026-07-28) server requires on every request, for the calls the CallChannel sends
 * beside the Client: the negotiated protocol version, our client info and the capabilities we declared.
 */
export function callEnvelope(client: Client, clientInfo: { name: string; version: string }, upstream: UpstreamRelay | undefined): Record<string, unknown> {
  return {
    [PROTOCOL_VERSION_META_KEY]: client.getNegotiatedProtocolVersion(),
    [CLIENT_INFO_META_KEY]: clientInfo,
    [CLIENT_CAPABILITIES_META_KEY]: upstream?.capabilities() ?? {},
  };
}

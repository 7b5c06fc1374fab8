import type { Client, McpSubscription, Tool, Transport } from '@modelcontextprotocol/client';
import { CallChannel } from './call-channel.js';
import { callEnvelope } from './downstream-client.js';
import type { ToolList } from './list-tools.js';
import type { FeatureList } from './server-features.js';
import type { Dialed } from './slot-connector.js';
import type { SlotOptions } from './types.js';

/** One live connection of a ServerSlot: the SDK client, the call channel beside it, and what the server listed. */
export interface Live {
  client: Client;
  transport: Transport;
  /** tools/call goes here, beside the Client (see CallChannel). */
  calls: CallChannel;
  tools: Tool[];
  /** Names the server listed more than once (each kept once in `tools`). */
  duplicates: string[];
  /** Why the tools shown are not all the server listed (see ToolList). */
  notes: string[];
  /** The tools left out of the list that have a name, each with why (see ToolList). */
  leftOut: ReadonlyMap<string, string>;
  cacheScope?: 'public' | 'private';
  /** The prompt list as listed on connecting (see Handshaken): the one the catalog cache may keep. */
  promptsOnConnect: Promise<FeatureList | undefined>;
  /** A modern server's ttlMs for its list, and when the list was read: past that, open_toolbox lists again. */
  ttlMs?: number;
  listedAt: number;
  /** The era the server speaks (a modern server's calls carry the `_meta` envelope and may ask for input). */
  era: 'legacy' | 'modern';
  protocolVersion?: string;
  /** A modern server's `subscriptions/listen` stream for tools/list_changed. */
  subscription?: McpSubscription;
  startedAt: number;
  /** The capabilities this connection declared to the server (see capabilitiesKey): its tool list may depend on them. */
  capabilitiesKey: string;
  dead: boolean;
}

/**
 * Takes a fresh tools/list into the connection: the tools, the caching hints of a modern server (and when the list was
 * read, for its ttlMs), and the parameter headers its calls carry over Streamable HTTP (`http`: a stdio server's
 * calls never carry headers; an SSE server is legacy and declares none).
 */
export function applyList(live: Live, list: ToolList, http: boolean): void {
  live.tools = list.tools;
  live.duplicates = list.duplicates;
  live.notes = list.notes;
  live.leftOut = list.leftOut;
  if (list.cacheScope) live.cacheScope = list.cacheScope;
  else delete live.cacheScope;
  if (list.ttlMs !== undefined) live.ttlMs = list.ttlMs;
  else delete live.ttlMs;
  live.listedAt = Date.now();
  if (http) live.calls.declareHeaders(list.paramHeaders);
}

/**
 * The live connection a handshake yields: its era and protocol version, its call channel (a modern server's calls
 * carry the `_meta` envelope of the upstream client), and its tools (see applyList).
 */
export function openLive({ client, transport, list, prompts, capabilities }: Dialed, options: Pick<SlotOptions, 'clientInfo' | 'upstream'>, http: boolean): Live {
  const modern = client.getProtocolEra() === 'modern';
  const envelope = modern ? callEnvelope(client, options.clientInfo, options.upstream) : undefined;
  const live: Live = {
    client,
    transport,
    calls: new CallChannel(transport, envelope),
    tools: [],
    duplicates: [],
    notes: [],
    leftOut: new Map(),
    promptsOnConnect: prompts,
    listedAt: 0,
    era: modern ? 'modern' : 'legacy',
    ...(client.getNegotiatedProtocolVersion() ? { protocolVersion: client.getNegotiatedProtocolVersion() } : {}),
    startedAt: Date.now(),
    capabilitiesKey: capabilities,
    dead: false,
  };
  applyList(live, list, http);
  return live;
}
